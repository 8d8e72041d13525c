// Package cli implements the bandit-node command line: one file per
// subcommand, each a flag set and a run function. Commands other than run,
// init and simulate reach the daemon only through its control API.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// Version is the program's version, set at link time with
// -ldflags "-X github.com/bandit-node/bandit-node/cmd/bandit-node/cli.Version=...".
var Version = "0.1.0-dev"

// Families builds the registry of every protocol family this build knows.
func Families() (*protocol.Registry, error) {
	return protocol.NewRegistry(ping.Family{}, bai.Family{}, pfcb.Family{}, samba.Family{}, mpccb.NewFamily())
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// subs are its own subcommands (session start, peers add, ...), which
	// run dispatches to and completion offers.
	subs []command
}

// Restarter replaces the running process with a new run of the same
// program and arguments in environment env (syscall.Exec). It returns only
// on failure.
type Restarter func(env []string) error

// commands are the subcommands; restart, if not nil, lets run and bench
// apply the schedtrace setting (schedtrace.go).
func commands(restart Restarter) []command {
	return []command{
		{"init", "create a node directory: identity, API token, commented config", runInit, nil},
		{"run", "run the daemon", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runDaemon(ctx, args, stdout, stderr, restart)
		}, nil},
		{"id", "print this node's name, peer ID and addresses", runID, nil},
		{name: "peers", summary: "list the address book with connection state and latency; add a peer", run: runPeers, subs: peersCommands()},
		{name: "session", summary: "start, watch, list, cancel sessions, read results and logs", run: runSession, subs: sessionCommands()},
		{"simulate", "run a whole session in this process, deterministically", runSimulate, nil},
		{name: "experiment", summary: "reproduce a paper's experiments (CSV, figures, written results)", run: runExperiment, subs: experimentCommands()},
		{name: "data", summary: "prepare per-organisation data files for a session (mpccb)", run: runData, subs: dataCommands()},
		{name: "bench", summary: "measure the bare SAMBA message pattern over libp2p (the network baseline)", run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runBench(ctx, args, stdout, stderr, restart)
		}, subs: benchCommands(restart)},
		{name: "config", summary: "print the annotated example config.toml (every key explained)", run: runConfig, subs: configCommands()},
		{"version", "print the build: version, VCS revision and time, Go version", runVersion, nil},
		{"completion", "print a shell completion script: bash, zsh or fish", runCompletion, nil},
	}
}

// usageError marks a mistake in how a command was called (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// errAborted is returned when a waited-for session ended aborted (exit code 3).
var errAborted = errors.New("session aborted")

// errGaveUp is returned when --timeout ran out before a waited-for session
// ended (exit code 4): the session goes on at the daemon.
var errGaveUp = errors.New("gave up waiting")

// ExitCode maps an error from Run to the process exit code: 2 for usage
// mistakes, 3 for an aborted session, 4 for a wait that --timeout ended, 1
// for everything else.
func ExitCode(err error) int {
	var ue usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, errAborted):
		return 3
	case errors.Is(err, errGaveUp):
		return 4
	}
	return 1
}

// Run runs the command line args (without the program name) in this
// process: run and bench never restart it (see RunRestartable).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return RunRestartable(ctx, args, stdout, stderr, nil)
}

// RunRestartable is Run for the program's main, which passes restart: run
// and bench may then restart the process to apply their schedtrace setting.
func RunRestartable(ctx context.Context, args []string, stdout, stderr io.Writer, restart Restarter) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		if len(args) == 0 {
			return usageError{"no command given"}
		}
		return nil
	}
	for _, c := range commands(restart) {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout, stderr)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	printUsage(stderr)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "bandit-node: private federated multi-armed bandits among organizations.")
	fmt.Fprintln(w, "\nUsage: bandit-node COMMAND [flags] [args]\n\nCommands:")
	cmds := commands(nil)
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `bandit-node COMMAND -h` for a command's flags and an example.")
}

// newFlags returns a flag set whose usage, written to out, shows the
// synopsis, the flags (if any) and an example. The flag package's own error
// messages are discarded: parseArgs returns them as usage errors, which the
// caller prints once, after the usage.
func newFlags(name, synopsis, example string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if p, ok := out.(*flagProbe); ok {
		// completion is reading the command's flags (completion.go).
		p.fs, p.synopsis = fs, synopsis
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: bandit-node %s\n", synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(out, "\nFlags:")
			fs.SetOutput(out)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
		fmt.Fprintf(out, "\nExample:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(example), "\n", "\n  "))
	}
	return fs
}

// parseArgs parses flags interspersed with positional arguments and returns
// the positional ones, checking their number. A flag the command does not
// know, or a flag value that does not parse, is a usage error (exit code 2);
// the usage has already been written by then.
func parseArgs(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) < minPos || len(pos) > maxPos {
		fs.Usage()
		if maxPos == 0 {
			return nil, usageError{fmt.Sprintf("%s takes no arguments, got %q", fs.Name(), pos)}
		}
		return nil, usageError{fmt.Sprintf("%s: wrong number of arguments (%d)", fs.Name(), len(pos))}
	}
	return pos, nil
}

// setFlags returns the names of the flags the command line set.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// atLeastOne returns a usage error naming the first of the named integer
// flags that the command line set below 1. Only a flag left out takes its
// default (which may be 0, meaning "chosen for you"): a 0 or a negative
// number typed by the operator is a mistake, not a request for the default.
func atLeastOne(fs *flag.FlagSet, names ...string) error {
	set := setFlags(fs)
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			panic("atLeastOne: no flag --" + name)
		}
		if !set[name] {
			continue
		}
		v, err := strconv.ParseInt(f.Value.String(), 10, 64)
		if err != nil {
			panic(fmt.Sprintf("atLeastOne: --%s is not an integer flag: %v", name, err))
		}
		if v < 1 {
			return usageError{fmt.Sprintf("%s: --%s %d: must be at least 1 (leave the flag out for its default)", fs.Name(), name, v)}
		}
	}
	return nil
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
