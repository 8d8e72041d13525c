package bai

import (
	"context"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func problem1Spec(t testing.TB, algorithm string, agents int, seed int64) *protocol.Spec {
	t.Helper()
	text := `protocol = "bai"
[params]
algorithm = "` + algorithm + `"
[simulation]
agents = ` + itoa(agents) + `
arms = [0.7, 0.5, 0.3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]
seed = ` + itoa(int(seed)) + "\n"
	s, err := protocol.ParseSpec("spec", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

func simulate(t testing.TB, spec *protocol.Spec) (*Result, *sim.Result) {
	t.Helper()
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), reg, spec, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Result.(*Result), res
}

// BenchmarkSimulateStep measures the simulator's cost per global step
// (ns/step) on Problem 1 with 64 agents.
func BenchmarkSimulateStep(b *testing.B) {
	for _, alg := range []string{AlgCorrupted, AlgDPMASE, AlgCentral, AlgIndependent} {
		b.Run(alg, func(b *testing.B) {
			var steps int64
			for i := range b.N {
				_, sim := simulate(b, problem1Spec(b, alg, 64, int64(i+1)))
				steps += sim.Steps
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
		})
	}
}
