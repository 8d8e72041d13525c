package mpc

import (
	"math/rand/v2"
	"testing"
)

// benchComputation runs c on fresh engines b.N times and reports the rounds
// and words party 0 sends per computation. Each iteration is the whole
// computation: the dealer's run and every party's, Complete included.
func benchComputation(b *testing.B, parties int, frac uint, c computation) {
	engines, dealer := testEngines(b, parties, frac, 1)
	ops := 0
	b.ReportAllocs()
	for b.Loop() {
		runComputation(b, engines, dealer, c)
		ops++
	}
	st := engines[0].Stats()
	b.ReportMetric(float64(st.Rounds)/float64(ops), "rounds/op")
	b.ReportMetric(float64(st.WordsSent)/float64(ops), "words/op")
}

// BenchmarkMatVecP2 is 10 fixed-point 20×20 matrices times a vector for two
// parties: one round for the products, one for the truncation.
func BenchmarkMatVecP2(b *testing.B) {
	const dim, mats = 20, 10
	fx := Fixed{16}
	rng := rand.New(rand.NewPCG(28, 29))
	m, v := fx.EncodeAll(fixedInputs(rng, mats*dim*dim, 4)), fx.EncodeAll(fixedInputs(rng, dim, 4))
	benchComputation(b, 2, 16, product(m, v, func(e *Engine, om, ov *Open) []uint64 { return e.MatVec(om, ov, dim) }, true))
}

// BenchmarkArgMax10P2 is the argmax of 10 arms for two parties.
func BenchmarkArgMax10P2(b *testing.B) {
	fx := Fixed{16}
	benchComputation(b, 2, 16, argMaxComputation(fx, []float64{0.1, 0.7, -0.3, 0.69, 0.2, 0, 0.5, -1, 0.65, 0.3}))
}

// BenchmarkReciprocalP2 is 1/d for 10 values in [1, 2], three iterations,
// for two parties.
func BenchmarkReciprocalP2(b *testing.B) {
	fx := Fixed{20}
	d := fx.EncodeAll([]float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 2})
	benchComputation(b, 2, 20, func(e *Engine) ([]*Proc, func() []uint64) {
		var out []uint64
		return []*Proc{e.Reciprocal(shareOf(e, d), 1, 2, 3, &out)}, func() []uint64 { return out }
	})
}

// BenchmarkArgMax100P2 is the argmax of 100 scores for two parties.
func BenchmarkArgMax100P2(b *testing.B) {
	fx := Fixed{16}
	scores := make([]float64, 100)
	for i := range scores {
		scores[i] = float64((i*37)%100) / 100
	}
	benchComputation(b, 2, 16, argMaxComputation(fx, scores))
}
