package pfcb

import (
	"context"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func spec(t testing.TB, algorithm string, agents, producers int, rounds int64, instance string, seed int64) *protocol.Spec {
	t.Helper()
	s := &protocol.Spec{Protocol: Name,
		Params:     map[string]any{"algorithm": algorithm, "rounds": rounds},
		Simulation: map[string]any{"agents": int64(agents), "producers": int64(producers), "instance": instance, "seed": seed, "instance_seed": seed}}
	return s
}

func simulate(t testing.TB, s *protocol.Spec, opts sim.Options) (*Result, *sim.Result) {
	t.Helper()
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), reg, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Result.(*Result), res
}

// BenchmarkRound measures one simulated round of one agent (n = 10, m = 30).
func BenchmarkRound(b *testing.B) {
	const rounds = 20000
	for range b.N {
		simulate(b, spec(b, AlgPFCB, 10, 30, rounds, "uniform", 1), sim.Options{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds*10), "ns/agent-round")
}
