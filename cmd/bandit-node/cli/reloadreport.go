package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
)

// reloadReport is what a command says around one reload of the running
// daemon (peers add, peers remove) or its dry run (config check).
type reloadReport struct {
	// dryRun asks for a dry run of text (POST /v0/config/check: nothing
	// changes) instead of a real reload of the file in force.
	dryRun bool
	text   []byte
	// refused is the error the command returns when the daemon refuses the
	// config, before ": " and the daemon's reason.
	refused string
	// notRunning is what is printed, given the client's error, when no
	// daemon answers; the command then succeeds.
	notRunning func(err error) string
}

// reloadAndReport has the daemon whose control API api names reload its
// config — or, with r.dryRun, say what a reload of r.text would do —
// and prints the change on stdout: "the daemon reloaded its config: …", or
// "a reload would change nothing" / "a reload would apply: …". A refusal is
// an error; a daemon that does not answer is printed (r.notRunning), not an
// error. Without a readable API token a reload is an error and a dry run
// has nothing to compare with.
func reloadAndReport(ctx context.Context, api config.APIConfig, stdout io.Writer, r reloadReport) error {
	c, err := client.FromFiles(api.Listen, api.TokenFile, api.TrustFile())
	if err != nil {
		if r.dryRun {
			fmt.Fprintf(stdout, "no running daemon to compare with (%v)\n", err)
			return nil
		}
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var ch apitype.ConfigChange
	if r.dryRun {
		ch, err = c.CheckConfig(ctx, r.text)
	} else {
		ch, err = c.Reload(ctx)
	}
	var refused *client.Error
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%s: %w", r.refused, err)
	case err != nil:
		fmt.Fprintln(stdout, r.notRunning(err))
	case !r.dryRun:
		fmt.Fprintf(stdout, "the daemon reloaded its config: %s\n", ch)
	case ch.Empty():
		fmt.Fprintln(stdout, "a reload would change nothing")
	default:
		fmt.Fprintf(stdout, "a reload would apply: %s\n", ch)
	}
	return nil
}
