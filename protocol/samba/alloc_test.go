package samba

import (
	"context"
	"runtime"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// TestSimulatedStepAllocations: a simulated session's steps reuse the
// storage of their messages (drive.Recycler), with the sequential driver
// and the parallel one: at K = 20 a step allocates less than one body of
// every message it sends would take (2K + 2 messages of 30 bytes and more,
// and their batches' arrays of 80-byte messages), measured as the
// difference between sessions of two budgets, so that the set-up is left
// out.
func TestSimulatedStepAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four sessions")
	}
	const k, short, long = 20, 100, 1100
	arms := make([]float64, k)
	for i := range arms {
		arms[i] = 0.5 - float64(i)*0.02
	}
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		allocated := func(budget int64) uint64 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := sim.Run(context.Background(), reg, testSpec("ucb", budget, arms, 1), sim.Options{Workers: workers}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			return after.TotalAlloc - before.TotalAlloc
		}
		perStep := (float64(allocated(long)) - float64(allocated(short))) / (long - short)
		bound := float64(2*k+2) * 30 // the bodies alone, were they new every step
		t.Logf("workers=%d: %.0f bytes a step (bound %.0f)", workers, perStep, bound)
		if perStep > bound {
			t.Errorf("workers=%d: a step allocates %.0f bytes, more than %.0f", workers, perStep, bound)
		}
	}
}
