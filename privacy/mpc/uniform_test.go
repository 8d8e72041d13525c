package mpc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// chiSquareTop4 returns Pearson's χ² of the top four bits of vs against the
// uniform distribution over 16 buckets.
func chiSquareTop4(vs []uint64) float64 {
	var counts [16]float64
	for _, v := range vs {
		counts[v>>60]++
	}
	want := float64(len(vs)) / 16
	var chi float64
	for _, c := range counts {
		chi += (c - want) * (c - want) / want
	}
	return chi
}

// TestChiSquareDetects makes sure the uniformity statistic rejects what it
// should: a constant, and words confined to half the range.
func TestChiSquareDetects(t *testing.T) {
	constant := make([]uint64, uniformSamples)
	if chi := chiSquareTop4(constant); chi <= chiSquare999 {
		t.Errorf("χ² of a constant = %.1f, not above %.1f", chi, chiSquare999)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	half := randWords(rng, uniformSamples)
	for i := range half {
		half[i] >>= 1
	}
	if chi := chiSquareTop4(half); chi <= chiSquare999 {
		t.Errorf("χ² of words below 2^63 = %.1f, not above %.1f", chi, chiSquare999)
	}
	if chi := chiSquareTop4(randWords(rng, uniformSamples)); chi > chiSquare999 {
		t.Errorf("χ² of uniform words = %.1f, above %.1f", chi, chiSquare999)
	}
}

// TestShareUniform checks that party 1's share of a constant input is
// uniform, whether party 0 or party 1 owns the input: χ² of its top four
// bits over 4096 samples, threshold at the 0.999 quantile.
func TestShareUniform(t *testing.T) {
	fx := Fixed{16}
	const calls = 4
	for _, P := range partyCounts {
		for _, owner := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/owner=%d", partiesName(P), owner), func(t *testing.T) {
				x := repeat(fx.Encode(3.25), uniformSamples/calls)
				engines, dealer := testEngines(t, P, 16, uint64(600*P+owner))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var all []uint64
					for range calls { // samples from several calls, too
						all = append(all, e.Share(owner, x, len(x))...)
					}
					return nil, func() []uint64 { return all }
				})
				if chi := chiSquareTop4(shares[1]); chi > chiSquare999 {
					t.Errorf("party 1's shares: χ² = %.1f > %.1f", chi, chiSquare999)
				}
				for i, v := range reconstruct(shares) {
					if v != x[0] {
						t.Fatalf("sample %d reconstructs %#x, want %#x", i, v, x[0])
					}
				}
			})
		}
	}
}

// TestOpeningsUniform checks that what a party sees of an opening is
// uniform: the Value of a Mask opening of a constant vector, and of a
// MaskBinary one. Each party sees the same Value, and Value plus the
// parties' mask shares (sum, or XOR) is the input.
func TestOpeningsUniform(t *testing.T) {
	for _, P := range partyCounts {
		for _, bin := range []bool{false, true} {
			name := "Mask"
			if bin {
				name = "MaskBinary"
			}
			t.Run(partiesName(P)+"/"+name, func(t *testing.T) {
				x := repeat(0x0123456789abcdef, uniformSamples)
				engines, dealer := testEngines(t, P, 16, uint64(700*P)+uint64(len(name)))
				opens := make([]*Open, P+1) // the dealer's last
				runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var s []uint64
					if bin {
						s = sharesFor(e, xorShares(x, P, math.MaxUint64, 13))
					} else {
						s = shareOf(e, x)
					}
					i := e.Party()
					if e.IsDealer() {
						i = P
					}
					p := e.NewProc(func() bool {
						if bin {
							opens[i] = e.MaskBinary(s)
						} else {
							opens[i] = e.Mask(s)
						}
						return true
					})
					return []*Proc{p}, func() []uint64 { return nil }
				})
				v := opens[0].Value
				if chi := chiSquareTop4(v); chi > chiSquare999 {
					t.Errorf("opened values: χ² = %.1f > %.1f", chi, chiSquare999)
				}
				masks := make([][]uint64, P)
				for p := range P {
					if !slices.Equal(opens[p].Value, v) {
						t.Errorf("party %d saw another opened value than party 0", p)
					}
					masks[p] = opens[p].mask
				}
				m := reconstruct(masks)
				if bin {
					m = xorAll(masks)
				}
				if !slices.Equal(m, opens[P].mask) {
					t.Errorf("the parties' mask shares do not combine to the dealer's mask")
				}
				for i := range x {
					got := v[i] + m[i]
					if bin {
						got = v[i] ^ m[i]
					}
					if got != x[i] {
						t.Fatalf("element %d: value and mask give %#x, want %#x", i, got, x[i])
					}
				}
			})
		}
	}
}
