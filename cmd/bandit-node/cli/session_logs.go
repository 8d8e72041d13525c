package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
)

// runSessionLogs prints the log lines the daemon kept of one session
// (node/store/sessionlog.go), and with --follow the new ones until it ends.
func runSessionLogs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("session logs", "session logs [--config FILE] ID [--follow]",
		"bandit-node session logs --config node1/config.toml 3f2a9c0e1b7d4e55 --follow", stderr)
	follow := fs.Bool("follow", false, "keep printing new lines until the session ends")
	pos, c, _, err := fs.dial(args, 1, 1)
	if err != nil {
		return err
	}
	id := pos[0]
	since, err := printLogs(ctx, c, id, 0, stdout)
	if err != nil || !*follow {
		return err
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		rctx, cancel := withTimeout(ctx)
		s, err := c.Session(rctx, id)
		cancel()
		if err != nil {
			return err
		}
		ended := s.State == apitype.StateCompleted || s.State == apitype.StateAborted
		if ended {
			// The last lines are written as the session ends: give them
			// one more poll.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
		if since, err = printLogs(ctx, c, id, since, stdout); err != nil || ended {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// printLogs prints the lines of session id numbered since and later and
// returns the number of the next line.
func printLogs(ctx context.Context, c *client.Client, id string, since int64, w io.Writer) (int64, error) {
	rctx, cancel := withTimeout(ctx)
	defer cancel()
	logs, err := c.SessionLogs(rctx, id, since)
	if err != nil {
		return since, err
	}
	if logs.Dropped > 0 {
		fmt.Fprintf(w, "(%d earlier lines are no longer kept)\n", logs.Dropped)
	}
	for _, line := range logs.Lines {
		fmt.Fprintln(w, line)
	}
	return logs.Next, nil
}
