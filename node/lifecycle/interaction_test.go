package lifecycle

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/cockroachdb/datadriven"
)

// TestInteraction runs the scripted scenarios of testdata/*.txt, as etcd
// raft's interaction tests do, and checks each command's transcript: what
// every organization persisted, started and sent. Refresh the golden
// output after a deliberate change with
//
//	go test ./node/lifecycle -run TestInteraction -rewrite
//
// and read the diff. Commands:
//
//	session n=N                            org 1 proposes to orgs 2..N
//	deliver [from=X] [to=Y] [kind=K] [decline=REASON]
//	                                       deliver the queued messages that match,
//	                                       in order; a proposal to an organization
//	                                       with no session creates it (it accepts),
//	                                       or it declines with REASON
//	drop [from=X] [to=Y] [kind=K]          lose the queued messages that match
//	dup [from=X] [to=Y] [kind=K]           queue a second copy of each that matches
//	stabilize [decline=REASON]             deliver until nothing is queued
//	run n=N                                N times: a tick at every org, then
//	                                       stabilize; only changes of phase shown
//	tick [org=X] [n=N]                     N ticks (1 s each) at X (default: every org)
//	finish org=X [report=R]                X's party finishes with report R
//	progress org=X step=S total=T          X's progress
//	fail org=X reason=R                    X aborts for a local reason
//	unreachable org=X peer=Y reason=R      X could not reach Y
//	paused org=X d=DURATION                X was paused for DURATION
//	heard org=X peer=Y                     X received a protocol message from Y
//	restart org=X                          X's daemon restarts
//	phases                                 every organization's phase
//	queue                                  the messages waiting
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var e *env
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "session" && e == nil {
				d.Fatalf(t, "no session yet")
			}
			if e != nil {
				e.out.Reset()
			}
			if err := runCommand(t, &e, d); err != nil {
				return "error: " + err.Error() + "\n"
			}
			if e.out.Len() == 0 {
				return "ok\n"
			}
			return e.out.String()
		})
	})
}

func runCommand(t *testing.T, ep **env, d *datadriven.TestData) error {
	arg := func(key string) string {
		for _, a := range d.CmdArgs {
			if a.Key == key && len(a.Vals) > 0 {
				return a.Vals[0]
			}
		}
		return ""
	}
	num := func(key string, def int) int {
		if v := arg(key); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				d.Fatalf(t, "%s=%s: %v", key, v, err)
			}
			return n
		}
		return def
	}
	if d.Cmd == "session" {
		e, err := newEnv(num("n", 3))
		*ep = e
		return err
	}
	e := *ep
	orgArg := func(key string) (Org, bool, error) {
		v := arg(key)
		if v == "" {
			return 0, false, nil
		}
		o, err := e.org(v)
		return o, true, err
	}
	match := func() (func(Msg) bool, error) {
		from, hasFrom, err := orgArg("from")
		if err != nil {
			return nil, err
		}
		to, hasTo, err := orgArg("to")
		if err != nil {
			return nil, err
		}
		kind := arg("kind")
		return func(m Msg) bool {
			return (!hasFrom || m.From == from) && (!hasTo || m.To == to) && (kind == "" || m.Kind.String() == kind)
		}, nil
	}
	switch d.Cmd {
	case "deliver", "drop", "dup":
		ok, err := match()
		if err != nil {
			return err
		}
		var picked, kept []Msg
		for _, m := range e.queue {
			if ok(m) {
				picked = append(picked, m)
			} else {
				kept = append(kept, m)
			}
		}
		switch d.Cmd {
		case "deliver":
			e.queue = kept
			for _, m := range picked {
				e.deliver(m, arg("decline"))
			}
		case "drop":
			e.queue = kept
			for _, m := range picked {
				fmt.Fprintf(&e.out, "drop %s\n", Describe(m, e.names))
			}
		case "dup":
			e.queue = append(e.queue, picked...)
			for _, m := range picked {
				fmt.Fprintf(&e.out, "dup %s\n", Describe(m, e.names))
			}
		}
	case "stabilize":
		return e.stabilize(arg("decline"))
	case "run":
		e.quiet = true
		defer func() { e.quiet = false }()
		for range num("n", 1) {
			for i, m := range e.machines {
				if m != nil {
					m.Tick()
					e.collect(Org(i))
				}
			}
			if err := e.stabilize(""); err != nil {
				return err
			}
		}
	case "tick":
		o, has, err := orgArg("org")
		if err != nil {
			return err
		}
		for range num("n", 1) {
			for i, m := range e.machines {
				if m != nil && (!has || Org(i) == o) {
					m.Tick()
					e.collect(Org(i))
				}
			}
		}
	case "phases":
		fmt.Fprintln(&e.out, e.phases())
	case "queue":
		for _, m := range e.queue {
			fmt.Fprintln(&e.out, Describe(m, e.names))
		}
	default:
		o, has, err := orgArg("org")
		if err != nil {
			return err
		}
		if !has {
			return fmt.Errorf("%s needs org=", d.Cmd)
		}
		if d.Cmd == "restart" {
			e.restart(o)
			return nil
		}
		m := e.machines[o]
		if m == nil {
			return fmt.Errorf("%s has no session", e.names[o])
		}
		switch d.Cmd {
		case "finish":
			report := arg("report")
			if report == "" {
				report = "r" + strconv.Itoa(int(o)+1)
			}
			m.PartyFinished(protocol.Party{Role: "participant", Index: int(o)}, []byte(report))
		case "progress":
			m.SetProgress(protocol.Progress{Step: int64(num("step", 0)), Total: int64(num("total", 0))})
		case "fail":
			m.Fail(arg("reason"), arg("detail"))
		case "unreachable":
			p, _, err := orgArg("peer")
			if err != nil {
				return err
			}
			m.Unreachable(p, arg("reason"), arg("detail"))
		case "heard":
			p, _, err := orgArg("peer")
			if err != nil {
				return err
			}
			m.Heard(p)
		case "paused":
			dur, err := time.ParseDuration(arg("d"))
			if err != nil {
				return err
			}
			m.Paused(dur)
		default:
			return fmt.Errorf("unknown command %q", d.Cmd)
		}
		e.collect(o)
	}
	return nil
}
