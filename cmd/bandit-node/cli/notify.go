package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/bandit-node/bandit-node/internal/sdnotify"
)

// notifyService tells the service manager named by NOTIFY_SOCKET (systemd's
// Type=notify, deploy/systemd/bandit-node.service) how the daemon named
// name is doing: READY=1 once ready is closed (node.Run closes it when the
// host listens and the control API serves), STOPPING=1 when ctx ends (the
// daemon starts shutting down) or, failing that, when done is called, each
// with a STATUS= line for `systemctl status`. done, which the caller defers,
// returns once the last notification is sent. Without NOTIFY_SOCKET
// nothing is sent.
//
// It must be called in the process that goes on running, after
// applySchedtrace: systemd's NotifyAccess=main accepts only the service's
// main process, and the schedtrace restart keeps its PID (execve).
func notifyService(ctx context.Context, log *slog.Logger, name string) (ready chan<- struct{}, done func()) {
	sd, err := sdnotify.New(os.Getenv)
	if err != nil {
		log.Warn("not notifying the service manager", "err", err)
	}
	readyc := make(chan struct{})
	if !sd.Enabled() {
		return readyc, func() {}
	}
	send := func(assignments ...string) {
		if err := sd.Notify(assignments...); err != nil {
			log.Warn("could not notify the service manager", "err", err)
		}
	}
	finished, sent := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sent)
		select {
		case <-readyc:
		case <-finished: // Run failed before it was ready: the exit says it all
			return
		}
		send(sdnotify.Ready, sdnotify.Status(name+": listening, control API serving"))
		log.Debug("notified the service manager: ready")
		select {
		case <-ctx.Done():
		case <-finished:
		}
		send(sdnotify.Stopping, sdnotify.Status(name+": shutting down (aborting sessions, closing connections)"))
	}()
	return readyc, func() { close(finished); <-sent }
}
