package samba

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// BenchmarkStep measures one SAMBA step with full cryptography in the
// simulator (K = 100, UCB), as ms/step, with the sequential driver
// (workers=1) and the parallel one (workers=GOMAXPROCS).
func BenchmarkStep(b *testing.B) {
	arms := make([]float64, 100)
	for i := range arms {
		arms[i] = 0.5 - float64(i)*0.004
	}
	const budget = 1000
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for range b.N {
				if _, err := sim.Run(context.Background(), reg, testSpec("ucb", budget, arms, 1), sim.Options{Workers: workers}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*(budget-100)), "ms/step")
		})
	}
}

// BenchmarkMask measures a data owner's mask of one step and iteration
// (seedPRF and the scale's 2^x), which it derives every iteration.
func BenchmarkMask(b *testing.B) {
	alpha, err := newSeedPRF(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	var m mask
	for i := range b.N {
		m = maskFor(alpha, uint64(i), 1, false)
	}
	if !(m.a > 0) {
		b.Fatal("no mask")
	}
}
