package mpc

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNewtonSchulz refines the inverses of three matrices W = W₀ + Σ x xᵀ
// (B unit-norm outer products added) from c = 2/(2 + B) times the exact
// inverse of W₀, as a batch of the contextual bandit does, and checks the
// result against gonum's inverse of W, and its rounds, 2 + 4·iters (and
// the one that opens W). W₀ is small, or "late" (its diagonal about 5,000:
// an arm pulled thousands of times, whose inverse's entries are a few
// hundred units at 20 fractional bits): there c = 2/1002 shrinks X₀ below
// a unit unless the approximations are held scaled by 2^shift.
func TestNewtonSchulz(t *testing.T) {
	const dim, mats, frac = 4, 3, 20
	fx := Fixed{frac}
	for _, c := range []struct {
		name   string
		batch  int
		iters  int
		shift  uint
		late   bool
		within float64 // the largest error allowed; +Inf: must not converge
	}{
		{"B = 8, enough iterations", 8, 6, 0, false, 1e-5},
		{"B = 8, too few", 8, 1, 0, false, math.Inf(1)},
		{"B = 40", 40, 9, 0, false, 1e-5},
		{"B = 40, scaled by 2^5", 40, 9, 5, false, 1e-6},
		{"B = 1000, late, unscaled", 1000, 13, 0, true, math.Inf(1)},
		{"B = 1000, late, scaled by 2^9", 1000, 13, 9, true, 1e-8},
	} {
		rng := rand.New(rand.NewPCG(uint64(c.batch), 3))
		var w, prev, want []float64
		for range mats {
			w0 := mat.NewSymDense(dim, nil)
			for i := range dim {
				d := 1 + float64(rng.IntN(20))
				if c.late {
					d += 5000
				}
				w0.SetSym(i, i, d)
			}
			var inv0 mat.Dense
			if err := inv0.Inverse(w0); err != nil {
				t.Fatal(err)
			}
			wb := mat.NewSymDense(dim, nil)
			wb.CopySym(w0)
			for range c.batch {
				x := make([]float64, dim)
				var n float64
				for i := range x {
					x[i] = rng.NormFloat64()
					n += x[i] * x[i]
				}
				for i := range x {
					x[i] /= math.Sqrt(n)
				}
				wb.SymRankOne(wb, 1, mat.NewVecDense(dim, x))
			}
			var inv mat.Dense
			if err := inv.Inverse(wb); err != nil {
				t.Fatal(err)
			}
			for i := range dim {
				for j := range dim {
					w, prev, want = append(w, wb.At(i, j)), append(prev, inv0.At(i, j)*float64(uint64(1)<<c.shift)), append(want, inv.At(i, j))
				}
			}
		}
		scale := fx.Encode(2 / float64(2+c.batch))
		for _, P := range partyCounts {
			t.Run(c.name+"/"+partiesName(P), func(t *testing.T) {
				engines, dealer := testEngines(t, P, frac, 90+uint64(P))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var ow, res *Open
					p := e.NewProc(func() bool {
						ow = e.Mask(shareOf(e, fx.EncodeAll(w)))
						return true
					}, Later(func() *Proc {
						return e.NewtonSchulz(ow, shareOf(e, fx.EncodeAll(prev)), scale, c.shift, dim, c.iters, &res)
					}))
					return []*Proc{p}, func() []uint64 { return e.SharesOf(res) }
				})
				got := fx.DecodeAll(reconstruct(shares))
				var worst, largest float64
				for i := range want {
					worst = max(worst, math.Abs(got[i]/float64(uint64(1)<<c.shift)-want[i]))
					largest = max(largest, math.Abs(want[i]))
				}
				t.Logf("largest error %.2g (of entries up to %.2g) after %d iterations", worst, largest, c.iters)
				if math.IsInf(c.within, 1) {
					if worst < largest/10 {
						t.Errorf("the result is within %.2g of W⁻¹, whose entries reach %.2g: expected no convergence, the case tests nothing", worst, largest)
					}
				} else if !(worst <= c.within) {
					t.Errorf("largest error %.2g, want at most %.2g", worst, c.within)
				}
				if r, want := engines[0].Stats().Rounds, 1+2+4*c.iters; r != want {
					t.Errorf("%d rounds, want %d (W opened, X₀ truncated and opened, four an iteration)", r, want)
				}
			})
		}
	}
}
