package node

import (
	"context"
	"errors"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// pacedRole is a Paced role that asks its environment once an activation
// and counts what its driver does; it fails if activated while it waits.
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

// zeroEnvironment answers every pull with rewards of 0, at once.
type zeroEnvironment struct{}

func (zeroEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	return protocol.Outcome{ID: q.ID, Rewards: make([]float64, len(q.Arms))}, nil
}
func (zeroEnvironment) Immediate() bool { return true }
func (zeroEnvironment) Close() error    { return nil }

// TestPacedRoleActivatedAtItsRate: the daemon activates a Paced role
// Rate × TickInterval times a tick, carrying the fractions over, at most
// protocol.MaxActivationsPerTick times, and not once it is inactive; each
// activation's query is answered by an Immediate environment before the
// next activation.
func TestPacedRoleActivatedAtItsRate(t *testing.T) {
	perTick := protocol.TickInterval.Seconds()
	tests := []struct {
		name   string
		rate   float64
		active bool
		ticks  int
		want   []int // activations after each tick
	}{
		{"whole", 30 / perTick, true, 3, []int{30, 60, 90}},
		{"fractions carried over", 1.5 / perTick, true, 4, []int{1, 3, 4, 6}},
		{"slower than a tick", 0.25 / perTick, true, 5, []int{0, 0, 0, 1, 1}},
		{"bounded", 10 * protocol.MaxActivationsPerTick / perTick, true, 2, []int{protocol.MaxActivationsPerTick, 2 * protocol.MaxActivationsPerTick}},
		{"no rate", 0, true, 2, []int{0, 0}},
		{"inactive", 100, false, 2, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &pacedRole{rate: tt.rate, active: tt.active}
			s := &session{n: &Node{cfg: &Config{}}, mine: []protocol.Party{{Role: "agent"}}, roles: []protocol.Role{r},
				finished: []bool{false}, envs: []*envSlot{{env: zeroEnvironment{}, inline: true}},
				myProgress: map[protocol.Party]protocol.Progress{}, envCtx: context.Background()}
			var owed float64
			for tick, want := range tt.want {
				if err := s.paceRole(0, &owed); err != nil {
					t.Fatalf("tick %d: %v", tick, err)
				}
				if r.activations != want || r.interactions != want {
					t.Fatalf("after tick %d: %d activations and %d interactions, want %d", tick, r.activations, r.interactions, want)
				}
			}
		})
	}
	// A role that is not Paced is not activated by the driver.
	s := &session{n: &Node{cfg: &Config{}}, mine: []protocol.Party{{Role: "x"}}, roles: []protocol.Role{&notPaced{}}, finished: []bool{false}}
	var owed float64
	if err := s.paceRole(0, &owed); err != nil || owed != 0 {
		t.Errorf("a role that is not Paced: err %v, owed %v", err, owed)
	}
}

// notPaced is an Activated role without a rate, activated by a simulator's
// schedule only.
type notPaced struct{ protocol.Outbox }

func (notPaced) Start() error                { return nil }
func (notPaced) Step(protocol.Message) error { return nil }
func (notPaced) Tick() error                 { return nil }
func (notPaced) Active() bool                { return true }
func (notPaced) Activate() error             { return errors.New("activated") }
