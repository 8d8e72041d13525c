package mpccb

import (
	"math"
	"math/bits"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// nsReference is the batched algorithm with the update a constant-round
// secure batch would use (docs/protocols/mpccb.md, "Batches"): W_a and b_a
// kept additively, and W_a⁻¹ refreshed at each batch's start by k
// Newton–Schulz iterations X ← X(2I − W_a X) from the previous batch's
// inverse scaled by c = 2/(2+B). It is the design's check, in plaintext,
// not a protocol: the tests hold it to Reference.StepBatch.
type nsReference struct {
	arms, dim int
	eps       float64
	frac      uint
	g         *mpc.PRG
	w, x      []*mat.Dense
	b         []*mat.VecDense
	k         int
	c         float64
	worst     float64
}

// newNS returns an nsReference for batches of B with k iterations.
func newNS(p Params, s mpc.Seed, k, B int) *nsReference {
	r := &nsReference{c: 2 / float64(2+B), arms: p.Arms, dim: p.Dimensions, eps: p.Epsilon, frac: uint(p.PrecisionBits), g: mpc.NewPRG(s), k: k}
	for range p.Arms {
		w := mat.NewDense(p.Dimensions, p.Dimensions, nil)
		x := mat.NewDense(p.Dimensions, p.Dimensions, nil)
		for i := range p.Dimensions {
			w.Set(i, i, 1)
			x.Set(i, i, 1)
		}
		r.w, r.x = append(r.w, w), append(r.x, x)
		r.b = append(r.b, mat.NewVecDense(p.Dimensions, nil))
	}
	return r
}

// refresh runs the k iterations on every arm and records the largest
// entry of W_a X − I.
func (r *nsReference) refresh() {
	D := r.dim
	id := mat.NewDiagDense(D, nil)
	for i := range D {
		id.SetDiag(i, 2)
	}
	for a := range r.arms {
		r.x[a].Scale(r.c, r.x[a])
		for range r.k {
			var wx, t, nx mat.Dense
			wx.Mul(r.w[a], r.x[a])
			t.Sub(id, &wx)
			nx.Mul(r.x[a], &t)
			r.x[a] = &nx
		}
		var wx mat.Dense
		wx.Mul(r.w[a], r.x[a])
		var e float64
		for i := range D {
			for j := range D {
				v := wx.At(i, j)
				if i == j {
					v--
				}
				e = math.Max(e, math.Abs(v))
			}
		}
		r.worst = math.Max(r.worst, e)
	}
}

// batch is StepBatch with the refreshed inverse.
func (r *nsReference) batch(xs, rw [][]float64) ([]int, []float64) {
	r.refresh()
	arms, got := make([]int, len(xs)), make([]float64, len(xs))
	scale := float64(uint64(1) << r.frac)
	u := mat.NewVecDense(r.dim, nil)
	for j, x := range xs {
		smp := drawSamples(r.g, r.arms, r.eps, r.frac)
		xv := mat.NewVecDense(r.dim, x)
		best, bestScore, bestGamma := -1, 0.0, uint64(0)
		for a := range r.arms {
			var score float64
			if smp.y == 1 {
				score = float64(smp.v[a]) / scale
			} else {
				u.MulVec(r.x[a], xv)
				score = mat.Dot(u, r.b[a])
			}
			if best < 0 || score > bestScore || (score == bestScore && smp.gamma[a] > bestGamma) {
				best, bestScore, bestGamma = a, score, smp.gamma[a]
			}
		}
		arms[j], got[j] = best, rw[j][best]
	}
	for j, x := range xs {
		xv := mat.NewVecDense(r.dim, x)
		var o mat.Dense
		o.Outer(1, xv, xv)
		r.w[arms[j]].Add(r.w[arms[j]], &o)
		r.b[arms[j]].AddScaledVec(r.b[arms[j]], got[j], xv)
	}
	return arms, got
}

// TestNewtonSchulzBatchDesign checks the constant-round update the
// docs propose for secure batches: with X₀ = 2/(2+B)·(the previous
// inverse) — X₀W has its eigenvalues in (0, 2), as W grows by at most B
// unit-norm outer products a batch — k = ⌈log₂ B⌉ + 3 iterations make
// W X = I to within 10⁻⁶ and choose the exact batched algorithm's arm at
// every step; two iterations fewer do not reach it.
func TestNewtonSchulzBatchDesign(t *testing.T) {
	const T, arms, dim = 2000, 10, 20
	xs, rs := toyData(T, arms, dim, 21)
	p := DefaultParams()
	p.Arms, p.Dimensions = arms, dim
	for _, B := range []int{10, 100, 1000} {
		k := bits.Len(uint(B-1)) + 3 // ⌈log₂ B⌉ + 3
		want, _ := runBatched(p, mpc.Seed{3}, xs, rs, B)
		for _, c := range []struct {
			k    int
			full bool
		}{{k, true}, {k - 2, false}} {
			ns := newNS(p, mpc.Seed{3}, c.k, B)
			var got []int
			for s := 0; s < T; s += B {
				e := min(s+B, T)
				a, _ := ns.batch(xs[s:e], rs[s:e])
				got = append(got, a...)
			}
			agree := 0
			for j := range got {
				if got[j] == want[j] {
					agree++
				}
			}
			t.Logf("B = %d, k = %d: %d of %d arms the exact batched algorithm's; largest |WX − I| %.1e", B, c.k, agree, T, ns.worst)
			if c.full && (agree != T || !(ns.worst < 1e-6)) {
				t.Errorf("B = %d, k = %d: %d of %d arms agree, |WX − I| up to %.1e", B, c.k, agree, T, ns.worst)
			}
			if !c.full && ns.worst < 1e-6 {
				t.Errorf("B = %d: k = %d iterations already reach |WX − I| %.1e; the bound ⌈log₂ B⌉ + 3 is not tight", B, c.k, ns.worst)
			}
		}
	}
}
