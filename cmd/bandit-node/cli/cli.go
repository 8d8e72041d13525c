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
	"strings"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
)

// program is the name the usage and completion call this program by.
const program = "bandit-node"

// movedTo returns where a command bandit-node no longer has went: asking
// for one is a one-line usage error that says so, not an unknown command.
func movedTo(name string) (string, bool) {
	switch name {
	case "experiment":
		return "`bandit-lab experiment` (go build ./cmd/bandit-lab), out of the daemon's binary", true
	}
	return "", false
}

// Version is the program's version, set at link time with
// -ldflags "-X github.com/bandit-node/bandit-node/cmd/bandit-node/cli.Version=...".
var Version = "0.1.0-dev"

// Restarter replaces the running process with a new run of the same
// program and arguments in environment env (syscall.Exec). It returns only
// on failure.
type Restarter func(env []string) error

// commands are the subcommands; restart, if not nil, lets run and bench
// apply the schedtrace setting (schedtrace.go).
func commands(restart Restarter) []clikit.Command {
	return []clikit.Command{
		{Name: "init", Summary: "create a node directory: identity, API token, commented config", Run: runInit},
		{Name: "run", Summary: "run the daemon", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runDaemon(ctx, args, stdout, stderr, restart)
		}},
		{Name: "id", Summary: "print this node's name, peer ID and addresses", Run: runID},
		{Name: "peers", Summary: "list the address book with connection state and latency; add a peer", Run: runPeers, Subs: peersCommands()},
		{Name: "session", Summary: "start, watch, list, cancel sessions, read results and logs", Run: runSession, Subs: sessionCommands()},
		{Name: "simulate", Summary: "run a whole session in this process, deterministically", Run: runSimulate},
		{Name: "data", Summary: "prepare per-organisation data files for a session (mpccb)", Run: runData, Subs: dataCommands()},
		{Name: "bench", Summary: "measure the bare SAMBA message pattern over libp2p (the network baseline)", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runBench(ctx, args, stdout, stderr, restart)
		}, Subs: benchCommands(restart)},
		{Name: "config", Summary: "print the annotated example config.toml (every key explained)", Run: runConfig, Subs: configCommands()},
		{Name: "backup", Summary: "write a backup archive of this node while it runs: identity, token, config, records, logs", Run: runBackup},
		{Name: "restore", Summary: "restore a backup archive onto a new data directory or machine, keeping the peer ID", Run: runRestore},
		{Name: "version", Summary: "print the build: version, VCS revision and time, Go version", Run: runVersion},
		{Name: "completion", Summary: "print a shell completion script: bash, zsh or fish", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return clikit.RunCompletion(ctx, program, commands(nil), args, stdout, stderr)
		}},
	}
}

// errAborted is returned when a waited-for session ended aborted (exit code 3).
var errAborted = errors.New("session aborted")

// errGaveUp is returned when --timeout ran out before a waited-for session
// ended (exit code 4): the session goes on at the daemon.
var errGaveUp = errors.New("gave up waiting")

// ExitCode maps an error from Run to the process exit code: 2 for usage
// mistakes, 3 for an aborted session, 4 for a wait that --timeout ended, 1
// for everything else.
func ExitCode(err error) int {
	switch {
	case clikit.IsUsage(err):
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
			return clikit.UsageError{Msg: "no command given"}
		}
		return nil
	}
	if c, ok := clikit.Find(commands(restart), args[0]); ok {
		out := &writeCounter{w: stdout}
		err := c.Run(ctx, args[1:], out, stderr)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		// A command that failed before its --json output (a session
		// that aborted has written its record) writes the error there.
		if err != nil && out.n == 0 && wantsJSON(args[1:]) {
			writeJSONError(stdout, err)
		}
		return err
	}
	if to, ok := movedTo(args[0]); ok {
		return clikit.UsageError{Msg: fmt.Sprintf("%s: the command moved to %s", args[0], to)}
	}
	printUsage(stderr)
	return clikit.UsageError{Msg: fmt.Sprintf("unknown command %q", args[0])}
}

func printUsage(w io.Writer) {
	clikit.PrintUsage(w, program, "private federated multi-armed bandits among organizations.", commands(nil))
}

// newFlags returns a flag set for a bandit-node command (clikit.NewFlags).
func newFlags(name, synopsis, example string, out io.Writer) *flag.FlagSet {
	return clikit.NewFlags(program, name, synopsis, example, out)
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
