package cli

import (
	"context"
	"fmt"
	"io"

	banditnode "github.com/bandit-node/bandit-node"
)

// runConfig dispatches the config subcommands.
func runConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-node config COMMAND\n\nCommands:")
		for _, c := range configCommands() {
			fmt.Fprintf(stdout, "  %-8s %s\n", c.name, c.summary)
		}
		fmt.Fprintln(stdout, "\nExample:\n  bandit-node config example | less")
		if len(args) == 0 {
			return usageError{"config: name a command (example)"}
		}
		return nil
	}
	for _, c := range configCommands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageError{fmt.Sprintf("config: unknown command %q (known: example)", args[0])}
}

// configCommands are the config subcommands.
func configCommands() []command {
	return []command{{"example", "print the annotated example config.toml: every key, its default and bounds", runConfigExample, nil}}
}

// runConfigExample prints the annotated example configuration, built
// into the binary.
func runConfigExample(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config example", "config example", "bandit-node config example > config.example.toml", stderr)
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, banditnode.ConfigExample)
	return err
}
