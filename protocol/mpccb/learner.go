package mpccb

import "github.com/bandit-node/bandit-node/privacy/mpc"

// learner is Algorithm 1's state on one engine: every arm's W_a⁻¹ and b_a as
// shares. The dealer keeps a learner too: its values mean nothing, but
// running the same computation keeps its draws in step with the parties'.
//
// W_a⁻¹ is kept instead of W_a (Sherman–Morrison, the paper's Eq. 1), so no
// step inverts a matrix. Both start public — W_a⁻¹ = I, b_a = 0 — held by
// party 0; the paper has p′ share them, which makes no difference to anyone's
// view, as they are public constants.
type learner struct {
	e     *mpc.Engine
	arms  int
	dim   int
	iters int
	eps   float64
	winv  []uint64 // arms × dim × dim, row-major; in a batched session 2^shift·W_a⁻¹
	shift uint     // refreshShift of a batched session, 0 otherwise
	b     []uint64 // arms × dim
	w     []uint64 // arms × dim × dim: W_a itself, kept by batches (batch.go); nil until the first
	v110  bool     // run wire 1.1.0's step (learner_v110.go)
}

func newLearner(e *mpc.Engine, p Params) *learner {
	l := &learner{e: e, arms: p.Arms, dim: p.Dimensions, iters: p.ReciprocalIterations, eps: p.Epsilon,
		v110: p.wire == wireV110}
	if p.batched() {
		l.shift = refreshShift(p)
	}
	l.winv = e.Public(identities(p.Arms, p.Dimensions, e.Fixed().One()<<l.shift))
	l.b = make([]uint64, p.Arms*p.Dimensions)
	return l
}

// identities returns arms dim×dim identity matrices, row-major, with one
// on their diagonals.
func identities(arms, dim int, one uint64) []uint64 {
	id := make([]uint64, arms*dim*dim)
	for a := range arms {
		for i := range dim {
			id[(a*dim+i)*dim+i] = one
		}
	}
	return id
}

// stepOutputs receives what a step reveals to others: the shares of the
// one-hot a_t (for p′) and the share of r_t (for p″).
type stepOutputs struct {
	arm    func(onehot []uint64)
	reward func(share uint64)
}

// step returns the Program of one step of Algorithm 1 at the session's wire
// version: stepFused, or stepV110 for wire 1.1.0.
//
// The engine recycles the previous step's memory first (mpc.Engine.Recycle):
// nothing of that step is in use any more. What outlives a step is W_a⁻¹
// and b_a, updated in place in words of the learner's own, and what the
// step's outputs sent (encoded into messages before the step returns); x
// and rr are the caller's (mpc.Engine.Share), not the engine's scratch.
func (l *learner) step(x, rr []uint64, out stepOutputs) *mpc.Program {
	l.e.Recycle()
	if l.v110 {
		return l.stepV110(x, rr, out)
	}
	return l.stepFused(x, rr, out)
}

// stepFused returns the Program of one step of Algorithm 1 on the shares x of
// the context and rr of the reward row (the realised reward of every arm,
// shared by p″). Rounds with two parties, by the chains running side by
// side (R = a round of openings; "fused": a truncated result enters the
// next product without being opened again, mpc.Trunc.Open):
//
//	R1       open W_a⁻¹ (all arms), x, b_a, r_row              lines 10–11
//	R2       truncate u_a = W_a⁻¹x (fused), (r_row)_a x (fused)
//	R3       truncate s_a = u_a·b_a and x·u_a (fused);          line 11
//	         open u_a again, plainly, for the update's products
//	R4–R10   argmax of s̃ = s + y(v − s) with γ: 6 (sign, the
//	         generate bits merged into the first level) + 1
//	         (the AND of each row's comparisons, arithmetic,
//	         with the dealer's exploration folded in)          lines 12–15
//	 R4–R10  beside it: 1/d_a, d_a = 1 + x·u_a (R4–R7),
//	         v′_a = u_a/d_a (R8), open v′_a (R9),
//	         M_a = v′_a u_aᵀ (R10, fused)
//	R11      open o = onehot (sent to p′ before); then
//	         W_a⁻¹ −= o_a M_a (Eq. 1), b_a += o_a (r_a x),
//	         r_t = Σ o_a r_a to p″                            lines 16–23
//
// 11 rounds for up to 11 arms (20 at wire 1.1.0, stepV110; 17 with the
// former local truncation, which could fail); more than two parties add
// one round per carry-save level of the sign, more arms a round per
// further level of the AND (mpc.ArgMaxOr: 12 rounds for 50 arms, 13 for
// 100).
//
// The dealer draws y, v and γ as the paper does (samples.go) and deals γ;
// as it knows y and v it computes the exploring arm argmax_a v_a itself and
// the argmax returns (1 − y)·onehot(argmax s) + y·onehot(argmax v), which
// is the one-hot of argmax s̃ — the paper's arm, one round sooner (no
// product y·(v − s)). The update multiplies o_a last: o_a·trunc(v′_a u_aᵀ)
// is trunc(o_a v′_a u_aᵀ) for the chosen arm and an exact 0 for the others,
// as before, but needs no round after the argmax but o's.
//
// Every truncated product must stay below 2^62 in the ring (mpc.Trunc),
// that is below 2^(62−2L) as a real. The largest is the score
// s_a = xᵀW_a⁻¹b_a = xᵀθ_a, with θ_a the ridge estimate: ‖θ_a‖ ≤ R·√n_a/2
// after n_a pulls with rewards in [−R, R], and ‖x‖ ≤ 1. The others are at
// most R (r_a x) or 4 (d², with d ∈ [1, 2]). The feature parties refuse
// contexts of norm above 1 (each its part, then the whole context jointly:
// normcheck.go) and p″ refuses rewards above maxReward, which
// keeps every product below 2^61: a factor two of room for fixed-point
// drift.
//
// Lines 16–18 of the paper have p′ open a_t and share o back. The parties
// already hold the one-hot as shares, so they use it directly and only send
// p′ their shares: p′ learns the same a_t, one round trip sooner.
func (l *learner) stepFused(x, rr []uint64, out stepOutputs) *mpc.Program {
	e := l.e
	A, D := l.arms, l.dim
	fx := e.Fixed()
	g := e.NewProgram()
	var (
		smp             samples // the dealer's, in the clear; empty on a party
		gamma           []uint64
		oW, oX, oB, oRR *mpc.Open
		tu, trx, ts, tq *mpc.Trunc
		u, rx, m, oO    *mpc.Open
		oU              *mpc.Open
		onehot          []uint64
	)
	main := e.NewProc(func() bool {
		gamma = e.Dealt(A, func(dst []uint64) {
			smp = drawSamples(e.Sampler(), A, l.eps, fx.Frac)
			copy(dst, smp.gamma)
		})
		oW, oX, oB, oRR = e.Mask(l.winv), e.Mask(x), e.Mask(l.b), e.Mask(rr)
		return true
	}, func() bool {
		tu = e.TruncStart(e.MatVec(oW, oX, D))
		trx = e.TruncStart(e.MulRows(oRR, oX, D))
		return true
	}, func() bool {
		u, rx = tu.Open(), trx.Open()
		ts = e.TruncStart(e.Dot(u, oB, D))
		tq = e.TruncStart(e.Dot(u, oX, D))
		oU = e.Mask(tu.Result()) // a plain opening for the update's products
		return true
	}, func() bool {
		g.Go(l.scale(tq.Open().Plus([]uint64{fx.One()}), oU, &m))
		return true
	}, mpc.Later(func() *mpc.Proc {
		return e.ArgMaxOr(ts.Result(), gamma, mpc.TreeFewestRounds, func(z []uint64) uint64 {
			smp.explore(z)
			return smp.y
		}, &onehot)
	}), func() bool {
		if m == nil {
			return false // M_a = v′_a u_aᵀ is not ready yet
		}
		if out.arm != nil {
			out.arm(onehot)
		}
		oO = e.Mask(onehot)
		return true
	}, func() bool {
		// o_a is an integer: no rescaling.
		subInPlace(l.winv, e.MulRows(oO, m, D*D))
		addInPlace(l.b, e.MulRows(oO, rx, D))
		var rt uint64
		for _, w := range e.MulElem(oO, oRR) {
			rt += w
		}
		if out.reward != nil {
			out.reward(rt)
		}
		return true
	})
	g.Go(main)
	return g
}

// scale returns the Proc of the Sherman–Morrison term M_a = v′_a u_aᵀ,
// v′_a = u_a / d_a, into *m as a fused opening: the reciprocal of d_a ∈
// [1, 2] (‖x‖ ≤ 1 and W_a ⪰ I put x·W_a⁻¹x in [0, 1]), then two products
// with u_a, opened already. v′_a is opened again (R9) rather than fused:
// the round is free (M_a is due at R11), and a fused operand would double
// the dealer's words of the D² products of every arm.
func (l *learner) scale(d, u *mpc.Open, m **mpc.Open) *mpc.Proc {
	e := l.e
	var recip, ov *mpc.Open
	var tv, tm *mpc.Trunc
	p := e.NewProc()
	p.Then(mpc.Later(func() *mpc.Proc { return e.ReciprocalOpen(d, 1, 2, l.iters, &recip) }),
		func() bool {
			tv = e.TruncStart(e.MulRows(recip, u, l.dim))
			return true
		}, func() bool {
			ov = e.Mask(tv.Result())
			return true
		}, func() bool {
			tm = e.TruncStart(e.Outer(ov, u, l.dim))
			return true
		}, func() bool {
			*m = tm.Open()
			return true
		})
	return p
}

// subInPlace sets a to a − b, word by word: the learner's state stays in
// its own words across steps (learner.step).
func subInPlace(a, b []uint64) {
	for i, v := range b {
		a[i] -= v
	}
}

// addInPlace sets a to a + b.
func addInPlace(a, b []uint64) {
	for i, v := range b {
		a[i] += v
	}
}
