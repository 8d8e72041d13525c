package mpccb

import (
	"fmt"
	"math/bits"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// batchIterations is k, the Newton–Schulz iterations that refresh W_a⁻¹ at
// a batch's start: ⌈log₂ B⌉ + 3 (TestNewtonSchulzBatchDesign).
func batchIterations(batch int) int { return bits.Len(uint(batch-1)) + 3 }

// tournamentBatch is the smallest batch whose argmaxes meet in a
// tournament (mpc.TreeTournament) rather than through the AND tree with the
// fewest words (mpc.TreeFewestWords). The tournament's 25 more rounds a
// batch at 10 arms cost the batch the same on continental links (25 ms one
// way, 2,500 KB/s) as the parties' 15 KB a step it saves at B ≈ 200; from
// there it is cheaper, and the dealer's words are a fifth at any B.
const tournamentBatch = 200

// argmaxTree is the AND tree of a batch of B steps' argmaxes.
func argmaxTree(batch int) mpc.Tree {
	if batch >= tournamentBatch {
		return mpc.TreeTournament
	}
	return mpc.TreeFewestWords
}

// refreshShift is s, the power of two a batched learner holds W_a⁻¹
// scaled by (2^s·W_a⁻¹, mpc.Engine.NewtonSchulz's shift), so that the
// refresh's start 2/(2+B)·W_a⁻¹ keeps the fractional bits W_a⁻¹ has: the
// smallest s with 2^s ≥ (2 + B)/2, as far as the fixed-point range allows.
// The refresh truncates 2^s·W_a X, whose entries are at most 2√(1 + T) as a
// real (docs/protocols/mpccb.md, "Batches"), so 2L + s + 1 + ⌈log₂(1+T)/2⌉
// ≤ 61 keeps it below 2^61 in the ring — a factor two of room, as
// everywhere else. At L = 20: s = 6 at B = 100 and 9 at B = 1,000 for
// T ≤ 2^22; at L = 24 and T = 60,000: 4.
func refreshShift(p Params) uint {
	want := bits.Len(uint(p.Batch+1)) - 1
	half := (bits.Len64(uint64(p.Steps)) + 1) / 2 // ⌈log₂(1+T)/2⌉ for T ≥ 1, up to one more
	room := 61 - 2*p.PrecisionBits - 1 - half
	return uint(max(0, min(want, room)))
}

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
// contexts and rrs of their reward rows. The learner keeps W_a and b_a
// additively and 2^s·W_a⁻¹ (s = refreshShift(p)). Rounds with two parties
// and batch B (the batch the session runs, which sets the refresh's scale,
// shift and iterations; xs may be shorter, the session's last batch):
//
//	R1            open W_a, b_a, every x_j and reward row
//	R2 … R(3+4k)  2^s·W_a⁻¹ ← k Newton–Schulz iterations from
//	              2/(2+B)·2^s·W_a⁻¹ (mpc.Engine.NewtonSchulz), opened
//	              plainly
//	+1            θ_a = W_a⁻¹b_a, truncated (b_a/2^s opened beside
//	              the refresh, so that 2^s W_a⁻¹ times it is θ_a)
//	+1            θ_a opened
//	+1            s_{j,a} = θ_a·x_j, truncated
//	+6 + levels   the B argmaxes with their exploration, side by side;
//	              their AND trees take the fewest dealer's words
//	              (mpc.TreeFewestWords: one level up to 4 arms, two at
//	              10), where a sequential step takes the fewest rounds;
//	              from B = 200 a tournament (mpc.TreeTournament):
//	              8⌈log₂|A|⌉ + 1 rounds instead, 33 at 10 arms
//	+1            open the one-hots; q_{j,a} = o_{j,a}(r_j)_a,
//	              r_j = Σ_a q_{j,a}
//	+1            open q_{j,a}; W_a += Σ_j o_{j,a} x_j x_jᵀ
//	              (mpc.Engine.WeightedGram, from the openings of o_j and
//	              x_j), truncated once a batch
//	+1            b_a += Σ_j q_{j,a} x_j (mpc.Engine.SumOuter), truncated
//	              once a batch
//
// 15 + levels + 4k rounds: 57 at |A| = 10 and B = 100 (k = 10); with the
// tournament 10 + 8⌈log₂|A|⌉ + 4k: 94 at B = 1,000 (k = 13). A step's
// score is θ_a·x_j, with θ_a = W_a⁻¹b_a computed once a batch, where the
// sequential step computes (W_a⁻¹x)·b_a: the same in exact arithmetic, and
// it spares a step's |A|·D products (W_a⁻¹x_j, opened) — 2|A|D opened
// words a party and about 4|A|D dealer's words a step. b_a's sum of B products stays in the fixed-point
// range because p″ clamps rewards to R ≤ 2^(61−2L)/B (Params.maxReward).
// The exploration is each step's own: the dealer draws step j's samples
// (y, v, γ) after step j − 1's, as the reference draws them.
func (l *learner) stepBatch(xs, rrs [][]uint64, batch int, out batchOutputs) *mpc.Program {
	e := l.e
	e.Recycle()
	A, D, n := l.arms, l.dim, len(xs)
	fx := e.Fixed()
	if l.w == nil {
		l.w = e.Public(identities(A, D, fx.One()))
	}
	scale := fx.Encode(2 / float64(2+batch))
	iters := batchIterations(batch)
	g := e.NewProgram()
	smp := make([]samples, n)
	gamma := make([][]uint64, n)
	oX, oRR := make([]*mpc.Open, n), make([]*mpc.Open, n)
	ts := make([]*mpc.Trunc, n)
	oQ := make([]*mpc.Open, n)
	var tw, tb *mpc.Trunc
	onehot := make([][]uint64, n)
	var oW, oBs, winv, oTh *mpc.Open
	oO := make([]*mpc.Open, n)
	var tbs, tth *mpc.Trunc
	main := e.NewProc(func() bool {
		for j := range n {
			gamma[j] = e.Dealt(A, func(dst []uint64) {
				smp[j] = drawSamples(e.Sampler(), A, l.eps, fx.Frac)
				copy(dst, smp[j].gamma)
			})
			oX[j], oRR[j] = e.Mask(xs[j]), e.Mask(rrs[j])
		}
		oW = e.Mask(l.w)
		if l.shift == 0 {
			oBs = e.Mask(l.b)
		}
		return true
	}, func() bool {
		g.Go(e.NewtonSchulz(oW, l.winv, scale, l.shift, D, iters, &winv))
		if l.shift > 0 {
			// b_a/2^s, beside the refresh: (2^s W_a⁻¹)(b_a/2^s) is θ_a,
			// in range where 2^s θ_a would not be.
			tbs = e.ShiftStart(l.b, l.shift)
		}
		return true
	}, func() bool {
		if oBs == nil {
			oBs = e.Mask(tbs.Result()) // opened long before the refresh ends
		}
		if winv == nil {
			return false // the refresh is not done yet
		}
		copy(l.winv, e.SharesOf(winv))
		tth = e.TruncStart(e.MatVec(winv, oBs, D)) // θ_a = W_a⁻¹b_a
		return true
	}, func() bool {
		oTh = e.Mask(tth.Result())
		return true
	}, func() bool {
		for j := range n {
			ts[j] = e.TruncStart(e.Dot(oTh, oX[j], D)) // s_{j,a} = θ_a·x_j
		}
		return true
	}, func() bool {
		for j := range n {
			g.Go(e.ArgMaxOr(ts[j].Result(), gamma[j], argmaxTree(batch), func(z []uint64) uint64 {
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
		// batch's order, and the sums do not depend on it. W_a's and b_a's
		// updates are one product each a batch, each truncated once:
		// Σ_j o_{j,a} x_j x_jᵀ from the openings of o_j and x_j
		// (mpc.Engine.WeightedGram: nothing more opened), and
		// q_{j,a} = o_{j,a}(r_j)_a opened, then Σ_j q_{j,a} x_j
		// (mpc.Engine.SumOuter) — a dealt word per output a batch, where
		// step by step they took as many a step.
		tw = e.TruncStart(e.WeightedGram(oO, oX, A, D))
		for j := range n {
			q := e.MulElem(oO[j], oRR[j])
			var rt uint64
			for _, v := range q {
				rt += v
			}
			oQ[j] = e.Mask(q)
			if out.reward != nil {
				out.reward(j, rt)
			}
		}
		return true
	}, func() bool {
		tb = e.TruncStart(e.SumOuter(oQ, oX, A, 1, D))
		return true
	}, func() bool {
		addInPlace(l.b, tb.Result())
		addInPlace(l.w, tw.Result())
		return true
	})
	g.Go(main)
	return g
}
