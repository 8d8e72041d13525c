// Package cli implements the bandit-lab command line: one file per
// subcommand, each a flag set and a run function. The experiments run the
// protocols' own roles in the simulator; nothing here talks to a daemon.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
)

// program is the name the usage and completion call this program by.
const program = "bandit-lab"

// commands are the subcommands.
func commands() []clikit.Command {
	return []clikit.Command{
		{Name: "experiment", Summary: "reproduce a paper's experiments (CSV, figures, written results)", Run: runExperiment, Subs: experimentCommands()},
		{Name: "completion", Summary: "print a shell completion script: bash, zsh or fish", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return clikit.RunCompletion(ctx, program, commands(), args, stdout, stderr)
		}},
	}
}

// ExitCode maps an error from Run to the process exit code: 2 for usage
// mistakes, 1 for everything else.
func ExitCode(err error) int {
	if clikit.IsUsage(err) {
		return 2
	}
	return 1
}

// Run runs the command line args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		if len(args) == 0 {
			return clikit.UsageError{Msg: "no command given"}
		}
		return nil
	}
	if c, ok := clikit.Find(commands(), args[0]); ok {
		err := c.Run(ctx, args[1:], stdout, stderr)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	printUsage(stderr)
	return clikit.UsageError{Msg: fmt.Sprintf("unknown command %q", args[0])}
}

func printUsage(w io.Writer) {
	clikit.PrintUsage(w, program, "the papers' experiments on bandit-node's protocols, in the simulator: CSV, figures, written results.", commands())
}

// newFlags returns a flag set for a bandit-lab command (clikit.NewFlags).
func newFlags(name, synopsis, example string, out io.Writer) *flag.FlagSet {
	return clikit.NewFlags(program, name, synopsis, example, out)
}
