package mpccb

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// armShares is feature party i's message of its shares of step st's
// one-hot vector for arm a, of P parties: party 0 holds the vector, the
// others zeros.
func armShares(i int, st uint64, a, arms int) protocol.Message {
	words := make([]uint64, arms)
	if i == 0 {
		words[a] = 1
	}
	m := encode(protocol.Party{Role: RolePuller}, &mpccbpb.Message{Kind: &mpccbpb.Message_Arm{Arm: &mpccbpb.Words{Step: st, Words: words}}})
	m.From = protocol.Party{Role: RoleFeature, Index: i}
	return m
}

// TestPullerWaitsForALaggingLink: nothing paces the feature parties on
// p′, so one feature party's shares may arrive many windows ahead of
// another's (its link to p′ slower); p′ keeps them and opens every step
// once the late shares come, and refuses only what is past its memory
// bound (pullerAhead).
func TestPullerWaitsForALaggingLink(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Steps, p.Window = 3, 200, 2
	a := protocol.Assignment{Roles: map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}}
	u, err := newPuller(protocol.RoleConfig{Assignment: a, Self: protocol.Party{Role: RolePuller}}, p)
	if err != nil {
		t.Fatal(err)
	}
	arm := func(st uint64) int { return int(st % 3) }
	// Feature party 1's shares of every step first, far past the window.
	for st := uint64(1); st <= uint64(p.Steps); st++ {
		if err := u.Step(armShares(1, st, arm(st), p.Arms)); err != nil {
			t.Fatalf("feature party 1's shares of step %d (window %d): %v", st, p.Window, err)
		}
	}
	for st := uint64(1); st <= uint64(p.Steps); st++ {
		if err := u.Step(armShares(0, st, arm(st), p.Arms)); err != nil {
			t.Fatalf("feature party 0's shares of step %d: %v", st, err)
		}
	}
	rd := u.Ready()
	if rd.Result == nil {
		t.Fatal("p′ did not finish")
	}
	local := rd.Result.Local.(PullerLocal)
	for i, got := range local.Arms {
		if want := arm(uint64(i + 1)); int(got) != want {
			t.Fatalf("step %d: opened arm %d, want %d", i+1, got, want)
		}
	}

	// Past the memory bound: refused, naming the steps.
	p.Steps, p.Arms = MaxSteps, MaxArms
	u, _ = newPuller(protocol.RoleConfig{Assignment: a, Self: protocol.Party{Role: RolePuller}}, p)
	far := 1 + u.ahead + 1
	if err := u.Step(armShares(1, far, 0, p.Arms)); err == nil || !strings.Contains(err.Error(), "unexpected arm shares") {
		t.Fatalf("shares of step %d with %d steps allowed ahead: %v", far, u.ahead, err)
	}
	if err := u.Step(armShares(1, far-1, 0, p.Arms)); err != nil {
		t.Fatalf("shares of step %d, the last allowed: %v", far-1, err)
	}
}
