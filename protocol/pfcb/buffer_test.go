package pfcb

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestShareBufferIsBounded: an agent holds the shares of its own
// communication round and of the next one, one per sender. A flood of
// well-formed shares of later rounds, and of repeated ones, from an allowed
// agent is refused, each with the reason, and the buffer stays within
// maxBufferedRounds × (n−1) shares.
func TestShareBufferIsBounded(t *testing.T) {
	a := newFuzzAgent(t, fuzzParams())
	env := envOf(t, a)
	if err := drive(a, env, func() error { return a.advance(1) }); err != nil || !a.waiting || a.z != 1 {
		t.Fatalf("not at the barrier of round 1: z %d, waiting %v, %v", a.z, a.waiting, err)
	}
	from := func(j int) protocol.Party { return protocol.Party{Role: RoleAgent, Index: j} }
	w := []float64{1, 1}
	// What the protocol can have in flight: agent[1]'s shares of rounds 1
	// and 2 (it passed the barrier of round 1 before agent[2]'s share of
	// it reached us).
	for _, comm := range []uint32{1, 2} {
		if err := a.Step(protocol.Message{From: from(1), Topic: true, Body: shareBody(comm, w, w)}); err != nil {
			t.Fatalf("share of round %d: %v", comm, err)
		}
	}
	for comm := uint32(3); comm < 3000; comm++ {
		err := a.Step(protocol.Message{From: from(1 + int(comm)%2), Topic: true, Body: shareBody(comm, w, w)})
		if err == nil || !strings.Contains(err.Error(), "but this agent is at round 1 of 7") {
			t.Fatalf("share of round %d: err = %v, want a refusal", comm, err)
		}
		checkShareBuffer(t, a)
	}
	for range 1000 {
		err := a.Step(protocol.Message{From: from(1), Topic: true, Body: shareBody(2, w, w)})
		if err == nil || !strings.Contains(err.Error(), "second share from agent[1] for communication round 2") {
			t.Fatalf("a repeated share: err = %v", err)
		}
		checkShareBuffer(t, a)
	}
	if n := len(a.shares[1]) + len(a.shares[2]); len(a.shares) != 2 || n != 2 {
		t.Fatalf("%d rounds and %d shares buffered, want the 2 legitimate ones", len(a.shares), n)
	}
	// Once agent[2]'s share of round 1 is in, the barrier lifts and the
	// round is gone from the buffer.
	if err := a.Step(protocol.Message{From: from(2), Topic: true, Body: shareBody(1, w, w)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.shares[1]; ok || a.waiting {
		t.Fatalf("round 1 still buffered (waiting %v)", a.waiting)
	}
	checkShareBuffer(t, a)
}
