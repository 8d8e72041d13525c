package explore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/sim"
	"github.com/bandit-node/bandit-node/protocol/sim/explore"
)

// TestExplorerCatchesDuplicates injects a bug into the link model — the
// receiver no longer drops the copies of a duplicated frame — and checks
// that the explorer reports it, with its seed, and shrinks the schedule to
// the one duplicate that shows it, which replays to the same failure.
func TestExplorerCatchesDuplicates(t *testing.T) {
	fc := families[1] // samba
	e := newExplorer(t, fc, func(c *explore.Config) {
		c.Link.KeepDuplicates = true
	})
	st, err := e.Explore(context.Background(), 1, 200)
	var f *explore.Failure
	if !errors.As(err, &f) {
		t.Fatalf("%v, err = %v: the explorer missed duplicates handed on twice", st, err)
	}
	t.Logf("caught after %v:\n%v", st, f)
	if !strings.Contains(f.Problem.Error(), "twice") {
		t.Errorf("problem %q, want a message handed on twice", f.Problem)
	}
	if len(f.Shrunk) != 1 || f.Shrunk[0].Kind != sim.Duplicate {
		t.Errorf("shrunk to %s, want one dup", sim.FormatSchedule(f.Shrunk))
	}
	replayed, err := sim.ParseSchedule(sim.FormatSchedule(f.Shrunk))
	if err != nil {
		t.Fatal(err)
	}
	if _, p := e.Check(context.Background(), replayed); p == nil || p.Error() != f.ShrunkProblem.Error() {
		t.Errorf("replaying %s: %v, want %v", sim.FormatSchedule(replayed), p, f.ShrunkProblem)
	}
	// The bug is the link model's: the same seed passes with it fixed.
	fixed := newExplorer(t, fc)
	if _, p := fixed.Check(context.Background(), f.Schedule); p != nil {
		t.Errorf("with de-duplication on, seed %d still fails: %v", f.Seed, p)
	}
}

// TestExplorerCatchesLostRestarts injects a bug into the restart model — a
// restarted daemon goes on with its session as if it had kept the role's
// state, which no daemon can — and checks that the explorer reports it
// among random schedules of every kind, with its seed, and shrinks the
// schedule to the one restart that shows it, which replays to the same
// failure and passes with the model fixed.
func TestExplorerCatchesLostRestarts(t *testing.T) {
	fc := families[1] // samba
	e := newExplorer(t, fc, func(c *explore.Config) {
		c.Link.KeepRoleAcrossRestart = true
	})
	st, err := e.Explore(context.Background(), 1, 300)
	var f *explore.Failure
	if !errors.As(err, &f) {
		t.Fatalf("%v, err = %v: the explorer missed a restarted daemon that kept its session", st, err)
	}
	t.Logf("caught after %v:\n%v", st, f)
	if !strings.Contains(f.Problem.Error(), "restarted") {
		t.Errorf("problem %q, want a restart the session survived", f.Problem)
	}
	if len(f.Shrunk) != 1 || f.Shrunk[0].Kind != sim.Restart {
		t.Errorf("shrunk to %s, want one restart", sim.FormatSchedule(f.Shrunk))
	}
	replayed, err := sim.ParseSchedule(sim.FormatSchedule(f.Shrunk))
	if err != nil {
		t.Fatal(err)
	}
	if _, p := e.Check(context.Background(), replayed); p == nil || p.Error() != f.ShrunkProblem.Error() {
		t.Errorf("replaying %s: %v, want %v", sim.FormatSchedule(replayed), p, f.ShrunkProblem)
	}
	fixed := newExplorer(t, fc)
	if out, p := fixed.Check(context.Background(), f.Schedule); p != nil {
		t.Errorf("with restarts modelled, seed %d still fails: %v", f.Seed, p)
	} else if out.Completed {
		t.Errorf("with restarts modelled, seed %d (%s) completed", f.Seed, sim.FormatSchedule(f.Schedule))
	} else if !strings.Contains(out.Reason, "restarted while the session was open") {
		t.Logf("with restarts modelled, seed %d aborts: %s", f.Seed, out.Reason)
	}
}

// TestExplorerCatchesTimingDependentResults runs a family whose result
// depends on when a message arrives — what the link layer's delays may
// change — and checks that the explorer reports a completed session whose
// result differs from the fault-free run's.
func TestExplorerCatchesTimingDependentResults(t *testing.T) {
	reg, err := protocol.NewRegistry(tickFamily{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := protocol.ParseSpec("tick.toml", []byte("protocol = \"tick\"\n[simulation]\nparticipants = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := explore.New(context.Background(), explore.Config{Registry: reg, Spec: spec,
		Kinds: []sim.FaultKind{sim.Delay, sim.Drop}, Equal: equalJSON(nil, false)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Explore(context.Background(), 1, 100)
	var f *explore.Failure
	if !errors.As(err, &f) || !strings.Contains(f.Problem.Error(), "result other than the fault-free run's") {
		t.Fatalf("%v, err = %v: want a result other than the fault-free run's", st, err)
	}
	t.Logf("caught after %v:\n%v", st, f)
	if len(f.Shrunk) != 1 {
		t.Errorf("shrunk to %s, want one fault", sim.FormatSchedule(f.Shrunk))
	}
}

// tickFamily is a deliberately timing-dependent family: participant[0]
// sends one message at its start; every other participant reports how many
// ticks passed before it arrived.
type tickFamily struct{ ping.Family }

func (tickFamily) Name() string { return "tick" }

func (tickFamily) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	return &tickRole{self: cfg.Self, peers: cfg.Assignment.Parties()}, nil
}

func (tickFamily) Combine(_ protocol.Assignment, _ any, reports map[protocol.Party][]byte) (any, error) {
	out := map[string]string{}
	for p, r := range reports {
		out[p.String()] = string(r)
	}
	return out, nil
}

// Grade grades nothing: the result is Combine's own, not ping's.
func (tickFamily) Grade(g protocol.Grading) (any, error) { return g.Result, nil }

type tickRole struct {
	self   protocol.Party
	peers  []protocol.Party
	ticks  int
	out    []protocol.Message
	result *protocol.Result
}

func (r *tickRole) Start() error {
	if r.self.Index != 0 {
		return nil
	}
	for _, p := range r.peers {
		if p != r.self {
			r.out = append(r.out, protocol.Message{To: p, Body: []byte("hello")})
		}
	}
	r.result = &protocol.Result{Report: []byte("sent")}
	return nil
}

func (r *tickRole) Step(m protocol.Message) error {
	if string(m.Body) != "hello" {
		return fmt.Errorf("unexpected body %q", m.Body)
	}
	r.result = &protocol.Result{Report: []byte(strconv.Itoa(r.ticks))}
	return nil
}

func (r *tickRole) Tick() error { r.ticks++; return nil }

func (r *tickRole) Ready() protocol.Ready {
	rd := protocol.Ready{Messages: r.out, Result: r.result}
	r.out, r.result = nil, nil
	return rd
}
