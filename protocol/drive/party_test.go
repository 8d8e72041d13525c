package drive

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// testRole is a role whose every call does what its fields say, and which
// counts the calls its driver makes.
type testRole struct {
	protocol.Outbox
	ticks, steps, answers int
	onStep                func(r *testRole, m protocol.Message) error
	onTick                func(r *testRole) error
}

func (r *testRole) Start() error { return nil }
func (r *testRole) Step(m protocol.Message) error {
	r.steps++
	if r.onStep != nil {
		return r.onStep(r, m)
	}
	return nil
}
func (r *testRole) Tick() error {
	r.ticks++
	if r.onTick != nil {
		return r.onTick(r)
	}
	return nil
}
func (r *testRole) Answer(o protocol.Outcome) error {
	r.answers++
	r.Send(protocol.Message{To: protocol.Party{Role: "peer"}, Body: []byte{byte(len(o.Rewards))}})
	return nil
}

// pacedRole is a Paced role that asks its environment once an activation
// and fails if activated while it waits for the answer.
type pacedRole struct {
	protocol.Outbox
	rate         float64
	active       bool
	waiting      bool
	activations  int
	interactions int
}

func (r *pacedRole) Start() error                  { return nil }
func (r *pacedRole) Step(protocol.Message) error   { return nil }
func (r *pacedRole) Tick() error                   { return nil }
func (r *pacedRole) Active() bool                  { return r.active }
func (r *pacedRole) Rate() float64                 { return r.rate }
func (r *pacedRole) Answer(protocol.Outcome) error { r.waiting = false; r.interactions++; return nil }

func (r *pacedRole) Activate() error {
	if r.waiting {
		return errors.New("activated while its query was outstanding")
	}
	r.activations++
	r.waiting = true
	r.Ask(protocol.Query{ID: uint64(r.activations), Kind: protocol.QueryPull, Step: int64(r.activations - 1), Arms: []int{0}})
	return nil
}

// testFamily builds the role it holds.
type testFamily struct {
	protocol.Family // unused methods panic
	role            protocol.Role
}

func (f testFamily) NewRole(protocol.RoleConfig) (protocol.Role, error) { return f.role, nil }

// zeroEnvironment answers every pull with rewards of 0; immediate says
// whether it says it answers at once.
type zeroEnvironment struct{ immediate bool }

func (zeroEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	return protocol.Outcome{ID: q.ID, Rewards: make([]float64, len(q.Arms))}, nil
}
func (e zeroEnvironment) Immediate() bool { return e.immediate }
func (zeroEnvironment) Close() error      { return nil }

var self = protocol.Party{Role: "agent"}

func newParty(t *testing.T, r protocol.Role, caps Caps) *Party {
	t.Helper()
	d, err := New(testFamily{role: r}, caps, protocol.RoleConfig{Self: self})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPacedRoleActivatedAtItsRate: a Paced role is activated Rate ×
// TickInterval times a tick, the fractions carried over, at most
// protocol.MaxActivationsPerTick times, and not once it is inactive; each
// activation's query is answered by an immediate environment before the
// next activation.
func TestPacedRoleActivatedAtItsRate(t *testing.T) {
	perTick := protocol.TickInterval.Seconds()
	tests := []struct {
		name   string
		rate   float64
		active bool
		want   []int // activations after each tick
	}{
		{"whole", 30 / perTick, true, []int{30, 60, 90}},
		{"fractions carried over", 1.5 / perTick, true, []int{1, 3, 4, 6}},
		{"slower than a tick", 0.25 / perTick, true, []int{0, 0, 0, 1, 1}},
		{"bounded", 10 * protocol.MaxActivationsPerTick / perTick, true, []int{protocol.MaxActivationsPerTick, 2 * protocol.MaxActivationsPerTick}},
		{"no rate", 0, true, []int{0, 0}},
		{"inactive", 100, false, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &pacedRole{rate: tt.rate, active: tt.active}
			d := newParty(t, r, Caps{Ticks: true})
			d.UseEnvironment(context.Background(), zeroEnvironment{immediate: true})
			for tick, want := range tt.want {
				if _, err := d.Tick(); err != nil {
					t.Fatalf("tick %d: %v", tick, err)
				}
				if r.activations != want || r.interactions != want {
					t.Fatalf("after tick %d: %d activations and %d interactions, want %d", tick, r.activations, r.interactions, want)
				}
			}
		})
	}
}

// TestCapsDecideTheDriving: what a family declares changes the driving in
// the driver, for the daemon and the simulator alike.
func TestCapsDecideTheDriving(t *testing.T) {
	big := make([]byte, MaxSmallMessage+1)
	tests := []struct {
		name    string
		caps    Caps
		onTick  func(r *testRole) error
		ticks   int    // the role's ticks after one Party.Tick
		wantErr string // in the Tick's error
	}{
		{"ticked", Caps{Ticks: true}, nil, 1, ""},
		{"message-driven: not ticked", Caps{}, nil, 0, ""},
		{"topic without TopicUser", Caps{Ticks: true}, func(r *testRole) error {
			r.Send(protocol.Message{Topic: true, Body: []byte("x")})
			return nil
		}, 1, "session topic, which its family does not use"},
		{"topic with TopicUser", Caps{Ticks: true, Topic: true}, func(r *testRole) error {
			r.Send(protocol.Message{Topic: true, Body: []byte("x")})
			return nil
		}, 1, ""},
		{"a large message of a family of small ones", Caps{Ticks: true, SmallMessages: true}, func(r *testRole) error {
			r.Send(protocol.Message{To: protocol.Party{Role: "peer"}, Body: big})
			return nil
		}, 1, "declares small messages"},
		{"a large message", Caps{Ticks: true}, func(r *testRole) error {
			r.Send(protocol.Message{To: protocol.Party{Role: "peer"}, Body: big})
			return nil
		}, 1, ""},
		{"a tick's error", Caps{Ticks: true}, func(r *testRole) error { return errors.New("bad tick") }, 1, "bad tick"},
		{"a tick's panic", Caps{Ticks: true}, func(r *testRole) error { panic("boom") }, 1, "agent[0] panicked (tick): boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &testRole{onTick: tt.onTick}
			d := newParty(t, r, tt.caps)
			_, err := d.Tick()
			if r.ticks != tt.ticks {
				t.Errorf("the role was ticked %d times, want %d", r.ticks, tt.ticks)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Tick: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Tick: %v, want an error with %q", err, tt.wantErr)
			case tt.wantErr != "":
				// A failed party stays failed: the role is not called again.
				if _, again := d.Step(protocol.Message{}); again != err || r.steps != 0 {
					t.Errorf("after the failure Step returned %v and stepped the role %d times", again, r.steps)
				}
			}
		})
	}
}

// TestEnvironments: an immediate environment's queries are answered
// within the call; another's come back in the batch, and the outcome
// through Answer; a role that asks with no environment fails.
func TestEnvironments(t *testing.T) {
	ask := func(r *testRole, _ protocol.Message) error {
		r.Ask(protocol.Query{ID: 1, Kind: protocol.QueryPull, Arms: []int{0, 1}})
		return nil
	}
	t.Run("immediate", func(t *testing.T) {
		r := &testRole{onStep: ask}
		d := newParty(t, r, Caps{})
		if !d.UseEnvironment(context.Background(), zeroEnvironment{immediate: true}) {
			t.Fatal("an Immediate environment is not immediate")
		}
		b, err := d.Step(protocol.Message{})
		if err != nil || r.answers != 1 || len(b.Queries) != 0 || len(b.Messages) != 1 || b.Messages[0].Body[0] != 2 {
			t.Fatalf("err %v, %d answers, batch %+v", err, r.answers, b)
		}
	})
	t.Run("asynchronous", func(t *testing.T) {
		r := &testRole{onStep: ask}
		d := newParty(t, r, Caps{})
		if d.UseEnvironment(context.Background(), zeroEnvironment{}) {
			t.Fatal("an environment that is not Immediate is immediate")
		}
		b, err := d.Step(protocol.Message{})
		if err != nil || r.answers != 0 || len(b.Queries) != 1 {
			t.Fatalf("err %v, %d answers, batch %+v", err, r.answers, b)
		}
		q := b.Queries[0]
		o, _ := zeroEnvironment{}.Answer(context.Background(), q)
		b, err = d.Answer(q, o, nil)
		if err != nil || r.answers != 1 || len(b.Messages) != 1 {
			t.Fatalf("Answer: err %v, %d answers, batch %+v", err, r.answers, b)
		}
		if _, err := d.Answer(q, o, nil); err == nil || !strings.Contains(err.Error(), "an answer to no query") {
			t.Fatalf("a second answer: %v", err)
		}
	})
	t.Run("failed", func(t *testing.T) {
		r := &testRole{onStep: ask}
		d := newParty(t, r, Caps{})
		d.UseEnvironment(context.Background(), zeroEnvironment{})
		b, _ := d.Step(protocol.Message{})
		_, err := d.Answer(b.Queries[0], protocol.Outcome{}, errors.New("the program exited"))
		var de *Error
		if !errors.As(err, &de) || de.Op != OpEnvironment || !strings.Contains(err.Error(), "pull query of step 0: the program exited") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("none", func(t *testing.T) {
		d := newParty(t, &testRole{onStep: ask}, Caps{})
		if _, err := d.Step(protocol.Message{}); !errors.Is(err, ErrNoEnvironment) {
			t.Fatalf("err %v, want ErrNoEnvironment", err)
		}
	})
}

// TestStepError: a message the role refuses names its sender; a finished
// party drops further messages.
func TestStepError(t *testing.T) {
	from := protocol.Party{Role: "peer", Index: 2}
	r := &testRole{onStep: func(r *testRole, m protocol.Message) error {
		if len(m.Body) == 0 {
			return errors.New("empty")
		}
		r.SetResult(protocol.Result{Report: m.Body})
		return nil
	}}
	d := newParty(t, r, Caps{})
	b, err := d.Step(protocol.Message{From: from, Body: []byte("x")})
	if err != nil || b.Result == nil || !d.Done() {
		t.Fatalf("err %v, result %v, done %v", err, b.Result, d.Done())
	}
	if _, err := d.Step(protocol.Message{From: from}); err != nil || r.steps != 1 {
		t.Fatalf("a finished party: err %v, %d steps", err, r.steps)
	}
	d = newParty(t, &testRole{onStep: r.onStep}, Caps{})
	_, err = d.Step(protocol.Message{From: from})
	if err == nil || err.Error() != "agent[0] rejected a message from peer[2]: empty" {
		t.Fatalf("err %v", err)
	}
}

// TestHalt: a role that cannot be halted, halted, fails.
func TestHalt(t *testing.T) {
	d := newParty(t, &testRole{}, Caps{})
	if _, err := d.Halt("budget spent"); err == nil || !strings.Contains(err.Error(), "cannot be halted") {
		t.Fatalf("err %v", err)
	}
}

// TestGuard: a panic in family code for no party becomes an *Error.
func TestGuard(t *testing.T) {
	err := Guard(OpCombine, func() error { panic("bad report") })
	var de *Error
	if !errors.As(err, &de) || de.Panic != "bad report" || len(de.Stack) == 0 || err.Error() != "panic (combining the reports): bad report" {
		t.Fatalf("err %v", err)
	}
	if err := Guard(OpCombine, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}
