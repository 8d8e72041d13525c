// Package clikit is what the command lines of bandit-node and bandit-lab
// share: a table of commands with their dispatch and the program's usage,
// flag sets whose usage shows a synopsis and an example, usage errors (exit
// code 2), and shell completion generated from the table.
package clikit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Command is one subcommand.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// Subs are its own subcommands (session start, experiment samba, ...),
	// which Run dispatches to and completion offers.
	Subs []Command
}

// UsageError marks a mistake in how a command was called (exit code 2).
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// IsUsage reports whether err is a mistake in how a command was called, or
// a request for its help (-h): both exit with code 2.
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue) || errors.Is(err, flag.ErrHelp)
}

// Find returns the command of cmds named name.
func Find(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// PrintUsage writes a program's usage: what it is (about), how it is
// called, and its commands in one column with their summaries.
func PrintUsage(w io.Writer, program, about string, cmds []Command) {
	fmt.Fprintf(w, "%s: %s\n", program, about)
	fmt.Fprintf(w, "\nUsage: %s COMMAND [flags] [args]\n\nCommands:\n", program)
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nRun `%s COMMAND -h` for a command's flags and an example.\n", program)
}
