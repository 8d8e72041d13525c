package mpc

import (
	"math"
	"testing"
)

var partyCounts = []int{2, 3, 5}

func TestMulFixed(t *testing.T) {
	fx := Fixed{16}
	a := []float64{1.5, -2.25, 0, 100.125, -0.001, 3.75, -1000}
	b := []float64{2, 3.5, -7, -0.5, 0.001, -3.75, 0.25}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				xa, xb := shareOf(e, fx.EncodeAll(a)), shareOf(e, fx.EncodeAll(b))
				return []*Proc{e.MulFixed(xa, xb, &out)}, func() []uint64 { return out }
			})
			got := fx.DecodeAll(reconstruct(shares))
			for i := range a {
				if want := a[i] * b[i]; math.Abs(got[i]-want) > 4*math.Ldexp(1, -16)*(1+math.Abs(want)) {
					t.Errorf("%g·%g = %g, want %g", a[i], b[i], got[i], want)
				}
			}
			st := engines[0].Stats()
			if st.Rounds != 2 {
				t.Errorf("%d rounds, want 2 (the product's, the truncation's)", st.Rounds)
			}
		})
	}
}

func TestLTZNearRingLimits(t *testing.T) {
	xs := []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 - 1, 1<<63 + 1, 12345, math.MaxUint64 - 12344, 1 << 40, math.MaxUint64 - (1<<40 - 1)}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, 10+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				return []*Proc{e.LTZ(shareOf(e, xs), &out)}, func() []uint64 { return out }
			})
			got := reconstruct(shares)
			for i, x := range xs {
				want := uint64(0)
				if int64(x) < 0 {
					want = 1
				}
				if got[i] != want {
					t.Errorf("ltz(%d) = %d, want %d", int64(x), got[i], want)
				}
			}
			if P == 2 {
				if r := engines[0].Stats().Rounds; r != 8 {
					t.Errorf("ltz took %d rounds with two parties, want 8 (7 for the adder, 1 for B2A)", r)
				}
			}
		})
	}
}

func TestArgMax(t *testing.T) {
	fx := Fixed{16}
	cases := []struct {
		name   string
		scores []float64
		best   []int // the acceptable winners
	}{
		{"distinct", []float64{0.1, 0.5, -0.3, 0.49}, []int{1}},
		{"negative", []float64{-5, -1, -3}, []int{1}},
		{"two", []float64{2, 1}, []int{0}},
		{"tie", []float64{1, 3, 3, 0, 3}, []int{1, 2, 4}},
		{"ten", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95}, []int{9}},
	}
	for _, P := range partyCounts {
		for _, c := range cases {
			t.Run(partiesName(P)+"/"+c.name, func(t *testing.T) {
				engines, dealer := testEngines(t, P, 16, 20+uint64(P))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var out []uint64
					return []*Proc{e.ArgMax(shareOf(e, fx.EncodeAll(c.scores)), e.DealtPermutation(len(c.scores)), &out)}, func() []uint64 { return out }
				})
				got := reconstruct(shares)
				ones, at := 0, -1
				for i, v := range got {
					switch v {
					case 1:
						ones++
						at = i
					case 0:
					default:
						t.Fatalf("one-hot has %d at %d", v, i)
					}
				}
				if ones != 1 {
					t.Fatalf("one-hot %v has %d ones", got, ones)
				}
				ok := false
				for _, b := range c.best {
					ok = ok || b == at
				}
				if !ok {
					t.Errorf("argmax %d, want one of %v", at, c.best)
				}
			})
		}
	}
}

// TestArgMaxTiesUniform checks that ties are broken uniformly: a fixed rule
// would reveal that there was a tie.
func TestArgMaxTiesUniform(t *testing.T) {
	fx := Fixed{16}
	scores := []float64{1, 0, 1, 1}
	counts := map[int]int{}
	const runs = 300
	for r := range runs {
		engines, dealer := testEngines(t, 2, 16, 1000+uint64(r))
		shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
			var out []uint64
			return []*Proc{e.ArgMax(shareOf(e, fx.EncodeAll(scores)), e.DealtPermutation(len(scores)), &out)}, func() []uint64 { return out }
		})
		for i, v := range reconstruct(shares) {
			if v == 1 {
				counts[i]++
			}
		}
	}
	if counts[1] != 0 {
		t.Fatalf("a non-maximal arm won %d times", counts[1])
	}
	// Chi-square over the three tied arms, 2 degrees of freedom: 13.8 is the
	// 0.999 quantile.
	var chi float64
	for _, i := range []int{0, 2, 3} {
		d := float64(counts[i]) - runs/3.0
		chi += d * d / (runs / 3.0)
	}
	if chi > 13.8 {
		t.Errorf("tie-breaking is not uniform: %v (χ² = %.1f)", counts, chi)
	}
}

func TestReciprocal(t *testing.T) {
	fx := Fixed{20}
	ds := []float64{1, 1.1, 1.5, 1.99, 2, 1.333}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 20, 30+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				return []*Proc{e.Reciprocal(shareOf(e, fx.EncodeAll(ds)), 1, 2, 3, &out)}, func() []uint64 { return out }
			})
			got := fx.DecodeAll(reconstruct(shares))
			for i, d := range ds {
				if math.Abs(got[i]-1/d) > 1e-5 {
					t.Errorf("1/%g = %g, want %g", d, got[i], 1/d)
				}
			}
			if r := engines[0].Stats().Rounds; r != 9 {
				t.Errorf("reciprocal took %d rounds, want 9 (3 + 2 per iteration)", r)
			}
		})
	}
}

func TestExp(t *testing.T) {
	fx := Fixed{20}
	xs := []float64{0, 1, -1, 0.5, -2, 2}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 20, 40+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				return []*Proc{e.Exp(shareOf(e, fx.EncodeAll(xs)), 8, &out)}, func() []uint64 { return out }
			})
			got := fx.DecodeAll(reconstruct(shares))
			for i, x := range xs {
				want := math.Pow(1+x/256, 256) // the approximation itself
				if math.Abs(got[i]-want) > 1e-3*(1+want) {
					t.Errorf("exp(%g) = %g, want %g (e^x = %g)", x, got[i], want, math.Exp(x))
				}
			}
		})
	}
}

func TestLess(t *testing.T) {
	fx := Fixed{16}
	a := []float64{1, -2, 3.5, 0, -7.25, 100}
	b := []float64{2, -3, 3.5, -0.0001, -7, 99.99}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, 50+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				return []*Proc{e.Less(shareOf(e, fx.EncodeAll(a)), shareOf(e, fx.EncodeAll(b)), &out)}, func() []uint64 { return out }
			})
			for i, v := range reconstruct(shares) {
				want := uint64(0)
				if fx.Encode(a[i]) != fx.Encode(b[i]) && a[i] < b[i] {
					want = 1
				}
				if v != want {
					t.Errorf("[%g < %g] = %d, want %d", a[i], b[i], v, want)
				}
			}
		})
	}
}
