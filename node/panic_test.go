package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	dto "github.com/prometheus/client_model/go"
)

// panicky is a test family of two participants that pass a message back and
// forth, one of them (panicky.who) panicking in panicky.in: NewRole for it,
// its Start, its Nth Step or Nth Ready (panicky.nth), its first Tick, or
// Combine on the initiator. small
// is what Info.SmallMessages says: whether received messages are stepped by the
// stream reader that read them or by the session's goroutine.
type panicky struct {
	pairFamily
	in    string // "newrole", "start", "step", "ready", "tick" or "combine"
	who   int    // the index of the participant that panics
	nth   int    // for "step" and "ready"
	small bool
}

func (panicky) Name() string { return "panicky" }

// Info: messages are small as f.small says; only the family that panics
// in Tick is ticked.
func (f panicky) Info() protocol.Info {
	info := f.pairFamily.Info()
	info.SmallMessages, info.MessageDriven = f.small, f.in != "tick"
	return info
}

func (f panicky) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	r := &panickyRole{self: cfg.Self, peer: otherParticipant(cfg.Self)}
	if cfg.Self.Index == f.who {
		if f.in == "newrole" {
			panic("boom in NewRole")
		}
		r.in, r.nth = f.in, f.nth
	}
	return r, nil
}

func (f panicky) Combine(protocol.Assignment, any, map[protocol.Party][]byte) (any, error) {
	if f.in == "combine" {
		panic("boom in Combine")
	}
	return nil, nil
}

// panickyStepsBeforeEnd: a role that does not panic finishes after this
// many Steps.
const panickyStepsBeforeEnd = 20

type panickyRole struct {
	readyBox
	self, peer protocol.Party
	in         string // where this role panics; "" for nowhere
	nth        int
	steps      int
	readies    int
}

func (r *panickyRole) Start() error {
	if r.in == "start" {
		panic("boom in Start")
	}
	if r.self.Index == 0 {
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{0}})
	}
	return nil
}

func (r *panickyRole) Step(m protocol.Message) error {
	r.steps++
	if r.in == "step" && r.steps == r.nth {
		var table []int
		_ = table[r.steps] // a latent bug: a runtime error, not a deliberate panic
	}
	if r.in == "tick" {
		return nil // waits for its tick
	}
	if r.steps >= panickyStepsBeforeEnd {
		r.out.Result = &protocol.Result{Report: []byte{1}}
	}
	if r.steps <= panickyStepsBeforeEnd {
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{0}})
	}
	return nil
}

func (r *panickyRole) Ready() protocol.Ready {
	r.readies++
	if r.in == "ready" && r.readies == r.nth {
		panic("boom in Ready")
	}
	return r.readyBox.Ready()
}

func (r *panickyRole) Tick() error {
	if r.in == "tick" {
		panic(fmt.Errorf("boom in Tick"))
	}
	return nil
}

// rolePanics is the node's bandit_role_panics_total for family.
func (tn *testNode) rolePanics(t testing.TB, family string) float64 {
	t.Helper()
	var m dto.Metric
	if err := tn.metrics.RolePanics.WithLabelValues(family).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestRolePanicEndsOnlyItsSession runs, on two real daemons, a ping session
// and beside it a session of a family whose role panics — in NewRole, in
// Start, in its third Step (stepped in place by the stream reader, or by the
// session's goroutine), in its third Ready (likewise), in Tick, or in
// Combine. The panicking session must abort on
// both daemons with "internal error in role … at ORG", the panic's value in
// the detail of the panicking organization's record only, the
// panic must be counted once, and the daemons must go on: the ping session
// completes, and so does one started after the abort. Without the recovery
// the panic ends the test binary.
func TestRolePanicEndsOnlyItsSession(t *testing.T) {
	tests := []struct {
		name   string
		fam    panicky
		party  string // the party whose role panics ("" for Combine)
		detail string // the panic, in the detail of node on's record
		on     int    // the node whose role panics
	}{
		{"new role", panicky{in: "newrole", who: 1, small: true}, "participant[1]", "boom in NewRole", 1},
		{"start", panicky{in: "start", who: 1, small: true}, "participant[1]", "boom in Start", 1},
		{"step in place", panicky{in: "step", who: 1, nth: 3, small: true},
			"participant[1]", "runtime error: index out of range [3] with length 0", 1},
		{"step on the session goroutine", panicky{in: "step", who: 1, nth: 3, small: false},
			"participant[1]", "runtime error: index out of range [3] with length 0", 1},
		{"step on the initiator", panicky{in: "step", who: 0, nth: 2, small: true},
			"participant[0]", "runtime error: index out of range [2] with length 0", 0},
		{"ready in place", panicky{in: "ready", who: 1, nth: 3, small: true}, "participant[1]", "boom in Ready", 1},
		{"ready on the session goroutine", panicky{in: "ready", who: 1, nth: 3, small: false}, "participant[1]", "boom in Ready", 1},
		{"ready on the initiator", panicky{in: "ready", who: 0, nth: 2, small: true}, "participant[0]", "boom in Ready", 0},
		{"tick", panicky{in: "tick", who: 1, small: true}, "participant[1]", "boom in Tick", 1},
		{"combine", panicky{in: "combine", small: true}, "", "internal error in protocol panicky, combining the reports at node1: boom in Combine", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := startNetworkWith(t, 2, openPolicy(tt.fam.Name()), func(int) []protocol.Family {
				return []protocol.Family{ping.Family{}, tt.fam}
			})
			pingID, err := nodes[0].StartSession(pingSpec(30, "node1", "node2"))
			if err != nil {
				t.Fatal(err)
			}
			id, err := nodes[0].StartSession([]byte("protocol = \"panicky\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
			if err != nil {
				t.Fatal(err)
			}
			// Both records have the reason; the panic's value is the
			// detail of the panicking organization's only.
			want := "combining the parties' reports failed on the initiator node1"
			if tt.party != "" {
				want = fmt.Sprintf("internal error in role %s at %s", tt.party, nodes[tt.on].cfg.Node.Name)
			}
			for i, tn := range nodes {
				got := waitEnded(t, tn, id, 30*time.Second)
				if got.State != stateAborted || got.Reason != want {
					t.Errorf("%s: session %s: %q, want aborted: %q", tn.cfg.Node.Name, got.State, got.Reason, want)
				}
				if wantDetail := map[bool]string{true: tt.detail}[i == tt.on]; got.Detail != wantDetail {
					t.Errorf("%s: the abort's detail is %q, want %q", tn.cfg.Node.Name, got.Detail, wantDetail)
				}
			}
			for i, tn := range nodes {
				want := 0.0
				if i == tt.on {
					want = 1
				}
				if got := tn.rolePanics(t, "panicky"); got != want {
					t.Errorf("%s: bandit_role_panics_total{protocol=\"panicky\"} = %v, want %v", tn.cfg.Node.Name, got, want)
				}
			}
			after, err := nodes[1].StartSession(pingSpec(5, "node1", "node2"))
			if err != nil {
				t.Fatal(err)
			}
			for _, sid := range []string{pingID, after} {
				for _, tn := range nodes {
					if got := waitEnded(t, tn, sid, 30*time.Second); got.State != stateCompleted {
						t.Errorf("%s: ping session %s: %s: %s", tn.cfg.Node.Name, sid, got.State, got.Reason)
					}
				}
			}
		})
	}
}
