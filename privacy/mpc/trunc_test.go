package mpc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTruncMillion runs 10^6 truncations at the largest magnitudes a
// truncation may be given, and finds every result equal to ⌊x/2^Frac⌋ or
// ⌊x/2^Frac⌋ + 1: less than one unit in the last place off.
//
// The magnitudes: the contextual bandit (protocol/mpccb) truncates products
// with 2·Frac fractional bits. Its largest is the score s = xᵀW⁻¹b, at most
// R·√T/2 for rewards in [−R, R] after T steps (the ridge estimate W⁻¹b has
// norm at most R·√n/2 after n pulls, and ‖x‖ ≤ 1); every other product is
// at most 4 (d² with d = 1 + xᵀW⁻¹x ∈ [1, 2]). mpccb refuses rewards with
// R·max(1, √T/2) > 2^(61−2·Frac), so no input it truncates exceeds 2^61 in
// the ring; with 0/1 rewards, T = 10^7 and Frac = 24 (the largest the
// parameters allow) s stays below 1582·2^48 ≈ 2^58.6. The inputs here lie
// in [2^61, 2^62) in magnitude, both signs, half of them at 2^62 − 1 − k
// for small k: the bound TruncStart states, beyond what the bandit uses.
// The previous, local truncation for two parties failed with probability
// about |x|/2^63 — about a quarter of these elements.
func TestTruncMillion(t *testing.T) {
	const n = 1_000_000
	const frac = 24
	rng := rand.New(rand.NewPCG(61, 62))
	xs := make([]uint64, n)
	for i := range xs {
		var m uint64
		if i%2 == 0 {
			m = TruncBound - rng.Uint64N(1<<20)
		} else {
			m = 1<<61 + rng.Uint64N(1<<61)
		}
		if rng.IntN(2) == 0 {
			m = -m
		}
		xs[i] = m
	}
	for _, P := range []int{2, 3} {
		t.Run(fmt.Sprintf("P=%d", P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, frac, 6100+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				x := shareOf(e, xs)
				var tr *Trunc
				var out []uint64
				p := e.NewProc(func() bool {
					tr = e.TruncStart(x)
					return true
				}, func() bool {
					out = tr.Result()
					return true
				})
				return []*Proc{p}, func() []uint64 { return out }
			})
			got := reconstruct(shares)
			bad := 0
			for i, x := range xs {
				fl := int64(x) >> frac
				if g := int64(got[i]); g != fl && g != fl+1 {
					if bad < 5 {
						t.Errorf("%d >> %d = %d, want %d or %d", int64(x), frac, g, fl, fl+1)
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d truncations off by more than one unit", bad, n)
			}
			if r := engines[0].Stats().Rounds; r != 1 {
				t.Errorf("%d rounds, want 1", r)
			}
		})
	}
}
