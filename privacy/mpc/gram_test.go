package mpc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestWeightedGram checks WeightedGram over the ring against the plaintext
// Σ_j s_{j,k} x_j x_jᵀ, for 2, 3 and 5 parties, one pair and seven: exact
// in Z/2^64 and symmetric, no word opened beyond the operands' openings
// (one round, theirs), and the dealer's words as documented — a pair's
// n(n+1)/2 + rows·n, and rows·n(n+1)/2 once.
func TestWeightedGram(t *testing.T) {
	const rows, dim = 3, 4
	const tri = dim * (dim + 1) / 2
	for _, P := range partyCounts {
		for _, n := range []int{1, 7} {
			t.Run(fmt.Sprintf("%s/%d pairs", partiesName(P), n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(P), uint64(n)))
				ss, xs := make([][]uint64, n), make([][]uint64, n)
				want := make([]uint64, rows*dim*dim)
				for j := range n {
					ss[j], xs[j] = randWords(rng, rows), randWords(rng, dim)
					for k := range rows {
						for i := range dim {
							for l := range dim {
								want[(k*dim+i)*dim+l] += ss[j][k] * xs[j][i] * xs[j][l]
							}
						}
					}
				}
				comp := overMaskedPairs(ss, xs, func(e *Engine, os, ox []*Open) []uint64 {
					return e.WeightedGram(os, ox, rows, dim)
				})
				engines, dealer := testEngines(t, P, 16, uint64(10*P+n))
				checkExact(t, reconstruct(runComputation(t, engines, dealer, comp)), want)
				st := engines[0].Stats()
				if st.Rounds != 1 {
					t.Errorf("%d rounds, want 1 (the operands' openings)", st.Rounds)
				}
				if want := int64(n * (rows + dim)); st.WordsSent != want {
					t.Errorf("party 0 sent %d words, want %d (the operands' openings only)", st.WordsSent, want)
				}
				r := runRecorded(t, engines, dealer, comp, nil)
				if r.err != nil {
					t.Fatal(r.err)
				}
				if want := n*(tri+rows*dim) + rows*tri; len(r.corr) != want {
					t.Errorf("%d correction words for %d pairs, want %d", len(r.corr), n, want)
				}
			})
		}
	}
}
