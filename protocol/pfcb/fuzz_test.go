package pfcb

import (
	"log/slog"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb/pfcbpb"
	"google.golang.org/protobuf/proto"
)

// fuzzParams are a short session that communicates from round 1 on
// (rounds 1, 2, 4, …, 64), so that a fuzzed message meets an agent at a
// barrier at once.
func fuzzParams() Params {
	p := DefaultParams()
	p.Rounds, p.TLo, p.THi, p.BarrierTimeout = 64, 1, 64, 1
	return p
}

// newFuzzAgent is agent[0] of three, with two producers.
func newFuzzAgent(t testing.TB, p Params) *agent {
	t.Helper()
	a, err := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent, Index: 0},
		Assignment: protocol.Assignment{Roles: map[string][]string{RoleAgent: {"a", "b", "c"}}},
		Rand:       cryptoReader{}, Clock: fixedClock{}, Logger: slog.New(slog.DiscardHandler), Simulated: true},
		p, &AgentLocal{Qualities: []float64{0.5, 0.7}, Costs: []float64{0.2, 0.3}, Capacities: []int{40, 10}, Rate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func shareBody(comm uint32, w, y []float64) []byte {
	b, err := proto.Marshal(&pfcbpb.Message{Kind: &pfcbpb.Message_Share{Share: &pfcbpb.Share{Comm: comm, W: w, Y: y}}})
	if err != nil {
		panic(err)
	}
	return b
}

// checkShareBuffer fails t if the agent buffers shares beyond what the
// protocol can have in flight: the rounds z and z+1, at most one share from
// each other agent in each.
func checkShareBuffer(t testing.TB, a *agent) {
	t.Helper()
	if len(a.shares) > maxBufferedRounds {
		t.Fatalf("shares buffered for %d communication rounds, more than %d", len(a.shares), maxBufferedRounds)
	}
	for z, got := range a.shares {
		if int(z) != a.z && int(z) != a.z+1 {
			t.Fatalf("shares buffered for communication round %d while the agent is at round %d", z, a.z)
		}
		if len(got) > a.n-1 {
			t.Fatalf("%d shares buffered for communication round %d from %d other agents", len(got), z, a.n-1)
		}
	}
}

// FuzzStep feeds an agent two arbitrary messages from arbitrary senders,
// before and at its first barrier, and then plays on: it must never panic,
// and its buffer of early shares stays within its bound.
func FuzzStep(f *testing.F) {
	ok := shareBody(1, []float64{3, 4}, []float64{1, 2})
	f.Add(ok, shareBody(2, []float64{1, 1}, []float64{1, 1}), 1, 2, true, true)
	f.Add(ok, ok, 1, 1, true, false)
	f.Add(shareBody(1, []float64{-1, 0}, []float64{5, 0}), shareBody(1, []float64{1e308, 1}, []float64{-1e308, 1}), 2, 1, true, true)
	f.Add(shareBody(1, []float64{1}, []float64{1, 2}), []byte{0x0a, 0x00}, 1, -1, true, true)
	f.Add([]byte{0xff}, []byte{}, 0, 3, false, true)
	f.Fuzz(func(t *testing.T, body1, body2 []byte, from1, from2 int, topic, wait bool) {
		a := newFuzzAgent(t, fuzzParams())
		env := envOf(t, a)
		if wait {
			if err := drive(a, env, func() error { return a.advance(1) }); err != nil || !a.waiting {
				t.Fatalf("not at the first barrier: %v", err)
			}
		}
		for i, m := range []protocol.Message{
			{From: protocol.Party{Role: RoleAgent, Index: from1}, Topic: topic, Body: body1},
			{From: protocol.Party{Role: RoleAgent, Index: from2}, Topic: topic, Body: body2},
		} {
			_ = a.Step(m)
			a.Ready()
			checkShareBuffer(t, a)
			if i == 0 {
				_ = drive(a, env, a.Tick)
			}
		}
		for range 8 {
			_ = drive(a, env, func() error { return a.advance(8) })
			checkShareBuffer(t, a)
		}
	})
}

// FuzzCombine feeds the initiator's Combine arbitrary agent reports.
func FuzzCombine(f *testing.F) {
	rep := func(r *pfcbpb.AgentReport) []byte {
		b, _ := proto.Marshal(r)
		return b
	}
	good := rep(&pfcbpb.AgentReport{Regret: 3, Rounds: 64, Curve: []float64{1, 2}, CurveEvery: 32, Producers: 2})
	f.Add(good, good)
	f.Add(good, rep(&pfcbpb.AgentReport{Regret: 3, Rounds: 64, Curve: []float64{1}, Producers: 2}))
	f.Add([]byte{0xff}, []byte{})
	f.Fuzz(func(t *testing.T, r0, r1 []byte) {
		a := protocol.Assignment{Roles: map[string][]string{RoleAgent: {"a", "b"}}}
		reports := map[protocol.Party][]byte{{Role: RoleAgent, Index: 0}: r0, {Role: RoleAgent, Index: 1}: r1}
		for _, alg := range []string{AlgPFCB, AlgFCB} {
			p := fuzzParams()
			p.Algorithm = alg
			res, err := (Family{}).Combine(a, p, reports)
			if err != nil {
				continue
			}
			if r := res.(*Result); len(r.Regrets) != 2 {
				t.Fatalf("%d regrets for 2 agents", len(r.Regrets))
			}
		}
	})
}
