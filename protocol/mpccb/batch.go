package mpccb

import (
	"fmt"
	"math/bits"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// batchIterations is k, the Newton–Schulz iterations that refresh W_a⁻¹ at
// a batch's start: ⌈log₂ B⌉ + 3 (TestNewtonSchulzBatchDesign).
func batchIterations(batch int) int { return bits.Len(uint(batch-1)) + 3 }

// unit returns the Program of one unit of p's session on the shares xs of
// its contexts and rrs of their reward rows: one step of Algorithm 1
// (learner.step), or in a batched session one batch (stepBatch). out's
// step j is the unit's j-th step.
func (l *learner) unit(p Params, xs, rrs [][]uint64, out batchOutputs) *mpc.Program {
	if p.batched() {
		return l.stepBatch(xs, rrs, p.Batch, out)
	}
	var so stepOutputs
	if out.arm != nil {
		so.arm = func(onehot []uint64) { out.arm(0, onehot) }
	}
	if out.reward != nil {
		so.reward = func(share uint64) { out.reward(0, share) }
	}
	return l.step(xs[0], rrs[0], so)
}

// unitName names unit u of p's session in errors: "step u", or "batch u
// (steps first–last)"; unit 0 is the joint range check.
func unitName(p Params, u uint64) string {
	switch {
	case u == 0:
		return "step 0 (the joint range check)"
	case !p.batched():
		return fmt.Sprintf("step %d", u)
	case u > p.units():
		return fmt.Sprintf("batch %d (of %d)", u, p.units())
	}
	first, n := p.unitSteps(u)
	return fmt.Sprintf("batch %d (steps %d–%d)", u, first, first+uint64(n)-1)
}

// unitKind is "a step", or "a batch" in a batched session.
func unitKind(p Params) string {
	if p.batched() {
		return "a batch"
	}
	return "a step"
}

// zeroInputs are the dealer's inputs of a unit of n steps: it computes on
// masks only, so zeros stand for the contexts and reward rows.
func zeroInputs(p Params, n int) (xs, rrs [][]uint64) {
	xs, rrs = make([][]uint64, n), make([][]uint64, n)
	for j := range n {
		xs[j], rrs[j] = make([]uint64, p.Dimensions), make([]uint64, p.Arms)
	}
	return xs, rrs
}

// batchOutputs receives what a batch reveals to others: the shares of each
// step's one-hot a_t (for p′) and of each r_t (for p″), step j of the
// batch first.
type batchOutputs struct {
	arm    func(j int, onehot []uint64)
	reward func(j int, share uint64)
}

// stepBatch returns the Program of one batch of the batched algorithm
// (docs/protocols/mpccb.md, "Batches") on the shares xs of the batch's
// contexts and rrs of their reward rows. The learner keeps W_a additively
// besides W_a⁻¹ and b_a. Rounds with two parties and batch B (the batch
// the session runs, which sets the refresh's scale and iterations; xs may
// be shorter, the session's last batch):
//
//	R1            open W_a, b_a, every x_j and reward row
//	R2 … R(3+4k)  W_a⁻¹ ← k Newton–Schulz iterations from
//	              2/(2+B)·W_a⁻¹ (mpc.Engine.NewtonSchulz), opened
//	              plainly; beside it, (r_j)_a x_j truncated
//	+1            u_{j,a} = W_a⁻¹x_j, fused; (r_j)_a x_j opened
//	+1            s_{j,a} = u_{j,a}·b_a, truncated
//	+6 + levels   the B argmaxes with their exploration, side by side;
//	              their AND trees take the fewest dealer's words
//	              (mpc.TreeFewestWords: one level up to 4 arms, two at
//	              10), where a sequential step takes the fewest rounds
//	+1            open the one-hots; b_a += Σ_j o_{j,a} (r_j)_a x_j,
//	              r_j = Σ_a o_{j,a}(r_j)_a
//	+1            open y_{j,a} = o_{j,a} x_j
//	+1            W_a += Σ_j y_{j,a} x_jᵀ (mpc.Engine.SumOuter), truncated
//
// 14 + levels + 4k rounds: 56 at |A| = 10 and B = 100 (k = 10).
// The exploration is each step's own: the dealer draws step j's samples
// (y, v, γ) after step j − 1's, as the reference draws them.
func (l *learner) stepBatch(xs, rrs [][]uint64, batch int, out batchOutputs) *mpc.Program {
	e := l.e
	e.Recycle()
	A, D, n := l.arms, l.dim, len(xs)
	fx := e.Fixed()
	if l.w == nil {
		id := make([]uint64, A*D*D)
		for a := range A {
			for i := range D {
				id[(a*D+i)*D+i] = fx.One()
			}
		}
		l.w = e.Public(id)
	}
	scale := fx.Encode(2 / float64(2+batch))
	iters := batchIterations(batch)
	g := e.NewProgram()
	smp := make([]samples, n)
	gamma := make([][]uint64, n)
	oX, oRR := make([]*mpc.Open, n), make([]*mpc.Open, n)
	trx, ts := make([]*mpc.Trunc, n), make([]*mpc.Trunc, n)
	oRX, oY := make([]*mpc.Open, n), make([]*mpc.Open, n)
	var tw *mpc.Trunc
	onehot := make([][]uint64, n)
	var oW, oB, winv *mpc.Open
	oO := make([]*mpc.Open, n)
	var tu []*mpc.Trunc
	main := e.NewProc(func() bool {
		for j := range n {
			gamma[j] = e.Dealt(A, func(dst []uint64) {
				smp[j] = drawSamples(e.Sampler(), A, l.eps, fx.Frac)
				copy(dst, smp[j].gamma)
			})
			oX[j], oRR[j] = e.Mask(xs[j]), e.Mask(rrs[j])
		}
		oW, oB = e.Mask(l.w), e.Mask(l.b)
		return true
	}, func() bool {
		g.Go(e.NewtonSchulz(oW, l.winv, scale, D, iters, &winv))
		for j := range n {
			trx[j] = e.TruncStart(e.MulRows(oRR[j], oX[j], D))
		}
		return true
	}, func() bool {
		if winv == nil {
			return false // the refresh is not done yet
		}
		copy(l.winv, e.SharesOf(winv))
		tu = make([]*mpc.Trunc, n)
		for j := range n {
			tu[j] = e.TruncStart(e.MatVec(winv, oX[j], D))
			// (r_j)_a x_j, truncated rounds ago, opened plainly in a
			// round the batch has anyway: its product with the one-hot
			// then costs the dealer a word per output, not two per term
			// (a fused operand's).
			oRX[j] = e.Mask(trx[j].Result())
		}
		return true
	}, func() bool {
		for j := range n {
			ts[j] = e.TruncStart(e.Dot(tu[j].Open(), oB, D))
		}
		return true
	}, func() bool {
		for j := range n {
			g.Go(e.ArgMaxOr(ts[j].Result(), gamma[j], mpc.TreeFewestWords, func(z []uint64) uint64 {
				smp[j].explore(z)
				return smp[j].y
			}, &onehot[j]))
		}
		return true
	}, func() bool {
		for j := range n {
			if onehot[j] == nil {
				return false // the argmaxes are not done yet
			}
		}
		for j := range n {
			if out.arm != nil {
				out.arm(j, onehot[j])
			}
			oO[j] = e.Mask(onehot[j])
		}
		return true
	}, func() bool {
		// o_{j,a} is an integer: no rescaling. The products come in the
		// batch's order, and the sums do not depend on it. W_a's update
		// is one product a batch: y_{j,a} = o_{j,a} x_j, opened, then
		// Σ_j y_{j,a} x_jᵀ (mpc.Engine.SumOuter) — |A|·D² dealt words a
		// batch, where o_{j,a}·(x_j x_jᵀ) step by step took as many a step.
		for j := range n {
			oY[j] = e.Mask(e.MulRows(oO[j], oX[j], D))
			addInPlace(l.b, e.MulRows(oO[j], oRX[j], D))
			var rt uint64
			for _, v := range e.MulElem(oO[j], oRR[j]) {
				rt += v
			}
			if out.reward != nil {
				out.reward(j, rt)
			}
		}
		return true
	}, func() bool {
		tw = e.TruncStart(e.SumOuter(oY, oX, A, D))
		return true
	}, func() bool {
		addInPlace(l.w, tw.Result())
		return true
	})
	g.Go(main)
	return g
}
