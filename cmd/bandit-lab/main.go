// Command bandit-lab reproduces the papers' experiments with bandit-node's
// simulator and draws their figures, out of the daemon's binary. Run
// `bandit-lab help` for the subcommands.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bandit-node/bandit-node/cmd/bandit-lab/cli"
)

func main() {
	if err := cli.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bandit-lab:", err)
		os.Exit(cli.ExitCode(err))
	}
}
