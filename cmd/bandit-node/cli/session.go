package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/standing"
	"github.com/bandit-node/bandit-node/node/store"
)

// pollEvery is how often --wait and --watch ask the daemon for progress.
const pollEvery = 500 * time.Millisecond

// sessionCommands are the subcommands of session.
func sessionCommands() []clikit.Command {
	return []clikit.Command{
		{Name: "start", Summary: "propose a session from a spec file", Run: runSessionStart},
		{Name: "status", Summary: "show a session's state and progress", Run: runSessionStatus},
		{Name: "result", Summary: "show a session's result", Run: runSessionResult},
		{Name: "list", Summary: "list sessions", Run: runSessionList},
		{Name: "cancel", Summary: "abort a session everywhere", Run: runSessionCancel},
		{Name: "logs", Summary: "show the log lines this daemon wrote about a session", Run: runSessionLogs},
	}
}

func runSession(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	subs := sessionCommands()
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "Usage: bandit-node session SUBCOMMAND [flags] [args]\n\nSubcommands:")
		for _, s := range subs {
			fmt.Fprintf(w, "  %-7s %s\n", s.Name, s.Summary)
		}
		fmt.Fprintln(w, "\nExample:\n  bandit-node session start --config node1/config.toml examples/ping.toml --wait")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return clikit.UsageError{Msg: "session: no subcommand given"}
		}
		return nil
	}
	for _, s := range subs {
		if s.Name == args[0] {
			return s.Run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return clikit.UsageError{Msg: fmt.Sprintf("session: unknown subcommand %q", args[0])}
}

func runSessionStart(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("session start", "session start --config FILE SPEC.toml [--wait [--timeout D]] [--json]",
		"bandit-node session start --config node1/config.toml examples/ping.toml --wait --json", stderr)
	wait := fs.Bool("wait", false, "wait for the session to end, showing progress, then print its result (exit code 3 if it was aborted)")
	timeout := fs.Duration("timeout", 0, "with --wait: give up waiting after this long, such as 30m (exit code 4; the session goes on at the daemon); 0: until it ends")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, c, _, err := fs.dial(args, 1, 1)
	if err != nil {
		return err
	}
	if err := checkTimeout(*timeout, *wait, "--wait"); err != nil {
		return err
	}
	spec, err := os.ReadFile(pos[0])
	if err != nil {
		return fmt.Errorf("reading the spec: %w", err)
	}
	// The daemon parses and checks the spec, once; its error, naming the
	// key at fault, is shown under the file's name.
	rctx, cancel := withTimeout(ctx)
	s, err := c.StartSession(rctx, spec)
	cancel()
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	if !*wait {
		if *asJSON {
			return printJSON(stdout, s)
		}
		fmt.Fprintf(stdout, "%s\n", s.ID)
		return nil
	}
	fmt.Fprintf(stderr, "session %s proposed\n", s.ID)
	return waitAndShow(ctx, c, s.ID, *timeout, *asJSON, stdout, stderr)
}

// checkTimeout refuses a --timeout that is negative or given without the
// flag (waitFlag) it bounds.
func checkTimeout(d time.Duration, waiting bool, waitFlag string) error {
	switch {
	case d < 0:
		return clikit.UsageError{Msg: fmt.Sprintf("--timeout %v: a wait cannot be negative (0 waits until the session ends)", d)}
	case d > 0 && !waiting:
		return clikit.UsageError{Msg: fmt.Sprintf("--timeout bounds %s, which was not given", waitFlag)}
	}
	return nil
}

// followSession follows session id to its end with a progress bar on
// stderr, for at most timeout (0: no limit), and returns its final state;
// a wait the timeout ends is errGaveUp, saying how to follow it further.
func followSession(ctx context.Context, c *client.Client, id string, timeout time.Duration, stderr io.Writer) (apitype.Session, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	bar := newProgressBar(stderr)
	final, err := c.Wait(wctx, id, pollEvery, bar.update)
	bar.done()
	if err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return final, fmt.Errorf("%w for session %s after %v (--timeout): it goes on at the daemon; "+
			"`bandit-node session status ID --watch` follows it", errGaveUp, id, timeout)
	}
	return final, err
}

// waitAndShow follows a session to its end (for at most timeout, 0 for no
// limit) with a progress bar on stderr, then prints its result.
func waitAndShow(ctx context.Context, c *client.Client, id string, timeout time.Duration, asJSON bool, stdout, stderr io.Writer) error {
	final, err := followSession(ctx, c, id, timeout, stderr)
	if err != nil {
		return err
	}
	rctx, cancel := withTimeout(ctx)
	defer cancel()
	res, err := c.Result(rctx, id)
	if err != nil {
		return err
	}
	if err := showResult(stdout, res, asJSON); err != nil {
		return err
	}
	return abortedError(final)
}

// abortedError returns errAborted (exit code 3) with the reason if s ended
// aborted, and nil otherwise.
func abortedError(s apitype.Session) error {
	if s.State == apitype.StateAborted {
		if s.Detail != "" {
			return fmt.Errorf("%w: %s\n  detail (this organization's only): %s", errAborted, s.Reason, s.Detail)
		}
		return fmt.Errorf("%w: %s", errAborted, s.Reason)
	}
	return nil
}

func runSessionStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("session status", "session status --config FILE ID [--watch [--timeout D]] [--json]",
		"bandit-node session status --config node1/config.toml 3f2a9c0e1b7d4e55 --watch", stderr)
	watch := fs.Bool("watch", false, "follow the session with a progress bar until it ends")
	timeout := fs.Duration("timeout", 0, "with --watch: give up after this long, such as 30m (exit code 4); 0: until it ends")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, c, cfg, err := fs.dial(args, 1, 1)
	if err != nil {
		return err
	}
	if err := checkTimeout(*timeout, *watch, "--watch"); err != nil {
		return err
	}
	var s apitype.Session
	if *watch {
		s, err = followSession(ctx, c, pos[0], *timeout, stderr)
	} else {
		rctx, cancel := withTimeout(ctx)
		s, err = c.Session(rctx, pos[0])
		cancel()
		if daemonDown(err) {
			var res apitype.Result
			if res, err = storedResult(cfg, pos[0], err, stderr); err == nil {
				s = res.Session
			}
		}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		err = printJSON(stdout, s)
	} else {
		printSession(stdout, s)
	}
	if err == nil && *watch {
		// Followed to its end, as start --wait does: aborted exits 3.
		err = abortedError(s)
	}
	return err
}

func printSession(w io.Writer, s apitype.Session) {
	fmt.Fprintf(w, "session   %s\n", s.ID)
	if s.Name != "" {
		fmt.Fprintf(w, "name      %s\n", s.Name)
	}
	proto := s.Protocol
	if s.Wire != "" {
		proto += " (wire " + s.Wire + ")"
	}
	fmt.Fprintf(w, "protocol  %s\ninitiator %s\nstate     %s\n", proto, s.Initiator, s.State)
	if s.Reason != "" {
		fmt.Fprintf(w, "reason    %s\n", s.Reason)
	}
	if s.Detail != "" {
		// The local error behind the reason: this organization's alone.
		fmt.Fprintf(w, "detail    %s   (local: not sent to the other organizations)\n", s.Detail)
	}
	if s.Progress.Total > 0 {
		fmt.Fprintf(w, "progress  %d/%d (%.1f%%)\n", s.Progress.Step, s.Progress.Total, 100*float64(s.Progress.Step)/float64(s.Progress.Total))
	}
	var roles []string
	for _, r := range slices.Sorted(maps.Keys(s.Roles)) {
		roles = append(roles, fmt.Sprintf("%s=%s", r, strings.Join(s.Roles[r], ",")))
	}
	fmt.Fprintf(w, "roles     %s\n", strings.Join(roles, " "))
	if len(s.Parties) > 0 {
		fmt.Fprintf(w, "plays     %s\n", strings.Join(s.Parties, " "))
	}
	fmt.Fprintf(w, "created   %s\n", s.Created.Local().Format(time.RFC3339))
	if s.Started != nil && s.Finished != nil {
		fmt.Fprintf(w, "duration  %v\n", s.Finished.Sub(*s.Started).Round(time.Millisecond))
	}
	// This organization's own environments: local, as the detail is.
	for _, p := range slices.Sorted(maps.Keys(s.Environments)) {
		u := s.Environments[p]
		fmt.Fprintf(w, "environment %s: %s answered %d queries in %.3f s (the longest %.1f ms)", p, u.Source, u.Queries, u.Seconds, u.MaxMillis)
		if u.Unanswered > 0 {
			fmt.Fprintf(w, ", %d unanswered", u.Unanswered)
		}
		fmt.Fprintln(w)
		if u.Warning != "" {
			fmt.Fprintf(w, "  warning: %s\n", u.Warning)
		}
	}
}

func runSessionResult(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("session result", "session result --config FILE ID [--json]",
		"bandit-node session result --config node1/config.toml 3f2a9c0e1b7d4e55 --json\n"+
			"# exits 3 (after printing the record) if the session was aborted", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, c, cfg, err := fs.dial(args, 1, 1)
	if err != nil {
		return err
	}
	rctx, cancel := withTimeout(ctx)
	defer cancel()
	res, err := c.Result(rctx, pos[0])
	if daemonDown(err) {
		res, err = storedResult(cfg, pos[0], err, stderr)
	}
	if err != nil {
		return err
	}
	if err := showResult(stdout, res, *asJSON); err != nil {
		return err
	}
	// The record is printed either way; an aborted session exits 3, as
	// session start --wait does.
	return abortedError(res.Session)
}

// showResult prints a result: JSON, or the session and the family's own
// rendering of its result.
func showResult(w io.Writer, res apitype.Result, asJSON bool) error {
	if asJSON {
		return printJSON(w, res)
	}
	printSession(w, res.Session)
	if len(res.Result) > 0 {
		fmt.Fprintln(w)
		if err := formatResult(w, res.Session.Protocol, res.Result); err != nil {
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(res.Local)) {
		fmt.Fprintf(w, "\nlocal result of %s:\n", p)
		printIndented(w, res.Local[p])
	}
	return nil
}

// formatResult renders a family's combined result for people.
func formatResult(w io.Writer, family string, raw []byte) error {
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	if f, err := reg.Lookup(family); err == nil {
		return f.FormatResult(w, raw)
	}
	printIndented(w, raw)
	return nil
}

func printIndented(w io.Writer, raw []byte) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		fmt.Fprintf(w, "%s\n", raw)
		return
	}
	printJSON(w, v)
}

func runSessionList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("session list", "session list --config FILE [--name NAME] [--json]", "bandit-node session list --config node1/config.toml --name weekly-promo", stderr)
	asJSON := fs.Bool("json", false, "print JSON: {standing, sessions}")
	name := fs.String("name", "", "only the standing session `NAME` and its runs")
	_, c, cfg, err := fs.dial(args, 0, 0)
	if err != nil {
		return err
	}
	rctx, cancel := withTimeout(ctx)
	defer cancel()
	var list []apitype.Session
	if *name != "" {
		list, err = c.SessionsNamed(rctx, *name)
	} else {
		list, err = c.Sessions(rctx)
	}
	var sched []apitype.Standing
	if err == nil {
		sched, err = c.Standing(rctx)
	}
	if daemonDown(err) {
		fmt.Fprintf(stderr, "bandit-node: the daemon is not running (%v); these are the records in %s\n", err, cfg.Node.DataDir)
		var errs []error
		list, errs = store.StoredSessions(cfg)
		for _, e := range errs {
			fmt.Fprintf(stderr, "bandit-node: skipping an unreadable record: %v\n", e)
		}
		if *name != "" {
			list = slices.DeleteFunc(list, func(s apitype.Session) bool { return s.Name != *name })
		}
		sched, err = standing.Stored(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "bandit-node: the standing sessions' schedule: %v\n", err)
			err = nil
		}
	}
	if err != nil {
		return err
	}
	if *name != "" {
		sched = slices.DeleteFunc(sched, func(s apitype.Standing) bool { return s.Name != *name })
	}
	if *asJSON {
		return printJSON(stdout, struct {
			Standing []apitype.Standing `json:"standing"`
			Sessions []apitype.Session  `json:"sessions"`
		}{sched, list})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if len(sched) > 0 {
		fmt.Fprintln(tw, "STANDING\tPROTOCOL\tSCHEDULE\tNEXT DUE\tACTIVE\tLAST RUN\tLAST STATE\tREASON")
		for _, s := range sched {
			next := "-"
			if s.NextDue != nil {
				next = s.NextDue.Local().Format("2006-01-02 15:04:05")
			}
			if s.RetryAt != nil && (s.NextDue == nil || s.RetryAt.Before(*s.NextDue)) {
				next = s.RetryAt.Local().Format("2006-01-02 15:04:05") + " (retry)"
			}
			active, lastID, lastState, reason := orDash(s.Active), "-", "-", ""
			if s.Last != nil {
				lastID, lastState, reason = orDash(s.Last.ID), s.Last.State, s.Last.Reason
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Protocol, s.Schedule, next, active, lastID, lastState, reason)
		}
		for _, s := range sched {
			if r := s.Removed; r != nil {
				fmt.Fprintf(tw, "%s: %d earlier runs removed by the retention policy (%d completed, %d aborted, %s to %s; last %s, result sha256 %s)\n",
					s.Name, r.Runs, r.Completed, r.Aborted, r.First.Local().Format("2006-01-02 15:04:05"),
					r.Last.Local().Format("2006-01-02 15:04:05"), r.LastID, orDash(r.LastResult))
			}
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "ID\tNAME\tPROTOCOL\tINITIATOR\tSTATE\tPROGRESS\tCREATED\tREASON")
	for _, s := range list {
		prog := "-"
		if s.Progress.Total > 0 {
			prog = fmt.Sprintf("%d/%d", s.Progress.Step, s.Progress.Total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, orDash(s.Name), s.Protocol, s.Initiator, s.State, prog,
			s.Created.Local().Format("2006-01-02 15:04:05"), s.Reason)
	}
	return tw.Flush()
}

// orDash returns s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runSessionCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("session cancel", "session cancel --config FILE ID", "bandit-node session cancel --config node1/config.toml 3f2a9c0e1b7d4e55", stderr)
	pos, c, _, err := fs.dial(args, 1, 1)
	if err != nil {
		return err
	}
	rctx, cancel := withTimeout(ctx)
	defer cancel()
	if err := c.Cancel(rctx, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cancelling %s\n", pos[0])
	return nil
}

// daemonDown reports whether err says that nothing listens at the daemon's
// control API: the daemon is not running, and the commands that only read
// results fall back to its data directory.
func daemonDown(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// storedResult reads session id from the data directory of a daemon that is
// not running (apiErr says so), telling the operator on stderr.
func storedResult(cfg *config.Config, id string, apiErr error, stderr io.Writer) (apitype.Result, error) {
	res, err := store.StoredResult(cfg, id)
	if err != nil {
		return res, fmt.Errorf("%w; and the daemon is not running: %v", err, apiErr)
	}
	fmt.Fprintf(stderr, "bandit-node: the daemon is not running (%v); this is the record in %s\n", apiErr, cfg.Node.DataDir)
	return res, nil
}
