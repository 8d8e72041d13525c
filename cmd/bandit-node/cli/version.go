package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/internal/buildinfo"
)

// runVersion prints the running build: one line, or buildinfo.Info as JSON.
func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version [--json]", "bandit-node version --json", stderr)
	asJSON := fs.Bool("json", false, "print JSON: version, module, VCS revision and time, modified, Go version")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	info := buildinfo.Read(Version)
	if *asJSON {
		return printJSON(stdout, info)
	}
	_, err := fmt.Fprintln(stdout, "bandit-node", info)
	return err
}
