// Command bandit-node is the daemon and CLI of bandit-node: private federated
// multi-armed bandits over a libp2p network of organizations. Run
// `bandit-node help` for the subcommands.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bandit-node/bandit-node/cmd/bandit-node/cli"
)

func main() {
	if err := cli.RunRestartable(context.Background(), os.Args[1:], os.Stdout, os.Stderr, restart); err != nil {
		fmt.Fprintln(os.Stderr, "bandit-node:", err)
		os.Exit(cli.ExitCode(err))
	}
}
