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
// the one that opens W).
func TestNewtonSchulz(t *testing.T) {
	const dim, mats, frac = 4, 3, 20
	fx := Fixed{frac}
	for _, c := range []struct {
		name   string
		batch  int
		iters  int
		within float64
	}{
		{"B = 8, enough iterations", 8, 6, 1e-5},
		{"B = 8, too few", 8, 1, math.Inf(1)},
		{"B = 40", 40, 9, 1e-5},
	} {
		rng := rand.New(rand.NewPCG(uint64(c.batch), 3))
		var w, prev, want []float64
		for range mats {
			w0 := mat.NewSymDense(dim, nil)
			for i := range dim {
				w0.SetSym(i, i, 1+float64(rng.IntN(20)))
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
					w, prev, want = append(w, wb.At(i, j)), append(prev, inv0.At(i, j)), append(want, inv.At(i, j))
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
						return e.NewtonSchulz(ow, shareOf(e, fx.EncodeAll(prev)), scale, dim, c.iters, &res)
					}))
					return []*Proc{p}, func() []uint64 { return e.SharesOf(res) }
				})
				got := fx.DecodeAll(reconstruct(shares))
				var worst float64
				for i := range want {
					worst = max(worst, math.Abs(got[i]-want[i]))
				}
				t.Logf("largest error %.2g after %d iterations", worst, c.iters)
				if math.IsInf(c.within, 1) {
					if worst < 1e-3 {
						t.Errorf("one iteration from 2/(2+B)·W₀⁻¹ is already within %.2g of W⁻¹: the case tests nothing", worst)
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
