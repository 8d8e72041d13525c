package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/bandit-node/bandit-node/node"
)

// reloadOnSIGHUP has n re-read its config file at every SIGHUP until ctx
// ends. The node logs what a reload changed; a refused config is logged here,
// at error level, with its reason (the running config stays in force).
func reloadOnSIGHUP(ctx context.Context, n *node.Node, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if _, err := n.Reload(ctx); err != nil {
					logger.Error("SIGHUP: config reload refused", "err", err)
				}
			}
		}
	}()
}
