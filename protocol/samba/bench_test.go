package samba

import (
	"testing"
)

// BenchmarkStep measures one SAMBA step with full cryptography in the
// simulator (K = 100, UCB), as ms/step.
func BenchmarkStep(b *testing.B) {
	arms := make([]float64, 100)
	for i := range arms {
		arms[i] = 0.5 - float64(i)*0.004
	}
	const budget = 1000
	for range b.N {
		simulate(b, testSpec("ucb", budget, arms, 1))
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*(budget-100)), "ms/step")
}
