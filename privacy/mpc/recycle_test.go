package mpc

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRecycle: engines that recycle their words at the start of every step
// (Engine.Recycle) compute what engines that allocate afresh compute, step
// after step, with state carried across steps in words of the caller's own
// (as protocol/mpccb's learner keeps W⁻¹ and b): masks, a fused
// truncation, a product with a fused operand, a sign (binary) and its
// conversion back (B2A), the dealer's corrections taken and handed over
// every step.
func TestRecycle(t *testing.T) {
	const frac, n, steps = 16, 12, 6
	one := uint64(1)
	quarter := -(one << (2*frac - 2)) // −1/4 at scale 2^(2·frac)
	for _, parties := range []int{2, 3} {
		t.Run(partiesName(parties), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(parties), 3))
			xs := make([][]uint64, steps)
			for s := range xs {
				xs[s] = make([]uint64, n)
				for i := range xs[s] {
					xs[s][i] = uint64(rng.Int64N(1<<(frac+1)) - 1<<frac) // in [−1, 1)
				}
			}
			type run struct {
				engines []*Engine
				dealer  *Engine
				acc     map[*Engine][]uint64 // each engine's shares of the state
			}
			newRun := func() *run {
				es, d := testEngines(t, parties, frac, 11)
				r := &run{engines: es, dealer: d, acc: map[*Engine][]uint64{}}
				for _, e := range append(slices.Clone(es), d) {
					r.acc[e] = e.Public(repeat(1<<frac, n))
				}
				return r
			}
			fresh, recycled := newRun(), newRun()
			step := func(r *run, recycle bool, x []uint64) []uint64 {
				outs := runComputation(t, r.engines, r.dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					if recycle {
						e.Recycle()
					}
					var ox, oa *Open
					var tr *Trunc
					var sign, bit []uint64
					p := e.NewProc(func() bool {
						ox, oa = e.Mask(shareOf(e, x)), e.Mask(r.acc[e])
						return true
					}, func() bool {
						tr = e.TruncStart(e.MulElem(ox, oa))
						return true
					}, Later(func() *Proc {
						// x²·acc − 1/4, at scale 2^(2·frac): its sign varies.
						return e.MSB(e.AddConst(e.MulElem(tr.Open(), ox), quarter), &sign)
					}), Later(func() *Proc {
						return e.B2A(sign, &bit)
					}), func() bool {
						for i, v := range bit { // the state, in place
							r.acc[e][i] += v
						}
						return true
					})
					return []*Proc{p}, func() []uint64 { return slices.Clone(bit) }
				})
				return reconstruct(outs)
			}
			ones := 0
			for s, x := range xs {
				want, got := step(fresh, false, x), step(recycled, true, x)
				for _, b := range want {
					ones += int(b)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("step %d: recycling engines computed %v, fresh ones %v", s, got, want)
				}
				stFresh, stRec := reconstruct(sharesOf(fresh.engines, fresh.acc)), reconstruct(sharesOf(recycled.engines, recycled.acc))
				if !slices.Equal(stRec, stFresh) {
					t.Fatalf("step %d: the recycling engines' state %v, the fresh ones' %v", s, stRec, stFresh)
				}
			}
			if ones == 0 || ones == steps*n {
				t.Fatalf("the sign was %d of %d times 1: the test computes a constant", ones, steps*n)
			}
		})
	}
}

// sharesOf returns the parties' entries of acc, in party order.
func sharesOf(es []*Engine, acc map[*Engine][]uint64) [][]uint64 {
	out := make([][]uint64, len(es))
	for i, e := range es {
		out[i] = acc[e]
	}
	return out
}
