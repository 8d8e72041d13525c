package cli

import (
	"context"
	"fmt"
	"io"

	banditnode "github.com/bandit-node/bandit-node"
	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
)

// runConfig dispatches the config subcommands.
func runConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-node config COMMAND\n\nCommands:")
		for _, c := range configCommands() {
			fmt.Fprintf(stdout, "  %-8s %s\n", c.Name, c.Summary)
		}
		fmt.Fprintln(stdout, "\nExamples:\n  bandit-node config check --config /var/lib/bandit/acme/config.toml\n  bandit-node config example | less")
		if len(args) == 0 {
			return clikit.UsageError{Msg: "config: name a command (check, example)"}
		}
		return nil
	}
	for _, c := range configCommands() {
		if c.Name == args[0] {
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	return clikit.UsageError{Msg: fmt.Sprintf("config: unknown command %q (known: check, example)", args[0])}
}

// configCommands are the config subcommands.
func configCommands() []clikit.Command {
	return []clikit.Command{
		{Name: "check", Summary: "check a config (and what a reload would change) or a session spec, changing nothing", Run: runConfigCheck},
		{Name: "example", Summary: "print the annotated example config.toml: every key, its default and bounds", Run: runConfigExample},
	}
}

// runConfigExample prints the annotated example configuration, built
// into the binary.
func runConfigExample(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config example", "config example", "bandit-node config example > config.example.toml", stderr)
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, banditnode.ConfigExample)
	return err
}
