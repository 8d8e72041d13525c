package mpccb

import "github.com/bandit-node/bandit-node/privacy/mpc"

// wireV110 is the family's previous wire version, which a daemon still
// speaks so that organizations can upgrade one at a time (Family.
// WireVersions): its step opens every truncated value again, computes
// y·(v − s) on shares before a two-input AND tree and a B2A, and opens
// o·v′ before the update — 20 rounds at P = 2 and 10 arms, where
// wire 1.2.0 (learner.stepFused) takes 11. Both compute the same arms.
const wireV110 = "1.1.0"

// stepV110 is learner.step as wire 1.1.0 runs it. Rounds with two
// parties, by the chains running side by side (R = a round of openings):
//
//	R1       open W_a⁻¹ (all arms) and x                    lines 10–11
//	R2       truncate W_a⁻¹x = u_a
//	R3       open u_a and b_a
//	R4       truncate s_a = u_a·b_a and x·u_a
//	R5       d_a = 1 + x·u_a; open y, v − s, d              lines 11–13
//	R6–R17   s̃ = s + y(v − s); argmax of s̃ with γ: 7 (sign) +
//	         ⌈log₂(|A|−1)⌉ (AND tree) + 1 (B2A)                line 15
//	 R5–R15  beside it: 1/d_a (Newton–Raphson, 9 rounds), v′_a = u_a/d_a
//	R18      open o = onehot (sent to p′), r_row, v′       lines 16–19
//	R19      v_a = o_a v′_a, (o r)_a; open both; r_t = Σ (o r)_a to p″
//	R20      truncate v_a u_aᵀ and (o r)_a x;
//	         W_a⁻¹ −= v_a u_aᵀ (Eq. 1), b_a += (o r)_a x      lines 20–23
func (l *learner) stepV110(x, rr []uint64, out stepOutputs) *mpc.Program {
	e := l.e
	A, D := l.arms, l.dim
	fx := e.Fixed()
	g := e.NewProgram()
	var (
		y, v, gamma    []uint64
		oW, oX, oU, oB *mpc.Open
		tu, ts, tq     *mpc.Trunc
		s, den         []uint64
		oY, oVS        *mpc.Open
		onehot         []uint64
		recip, vp      []uint64
		oO, oRR, oVP   *mpc.Open
		oV, oOR        *mpc.Open
		tw, tb         *mpc.Trunc
	)
	main := e.NewProc(func() bool {
		smp := e.Dealt(1+2*A, func(dst []uint64) {
			copy(dst, drawSamples(e.Sampler(), A, l.eps, fx.Frac).pack())
		})
		y, v, gamma = smp[:1], smp[1:1+A], smp[1+A:]
		oW, oX = e.Mask(l.winv), e.Mask(x)
		return true
	}, func() bool {
		tu = e.TruncStart(e.MatVec(oW, oX, D))
		return true
	}, func() bool {
		oU, oB = e.Mask(tu.Result()), e.Mask(l.b)
		return true
	}, func() bool {
		ts = e.TruncStart(e.Dot(oU, oB, D))
		tq = e.TruncStart(e.Dot(oU, oX, D))
		return true
	}, func() bool {
		s = ts.Result()
		den = e.AddConst(tq.Result(), fx.One())
		g.Go(l.scaleV110(den, &recip, &vp, func() *mpc.Open { return oU }))
		oY, oVS = e.Mask(y), e.Mask(mpc.Sub(v, s))
		return true
	}, mpc.Later(func() *mpc.Proc {
		st := mpc.Add(s, e.MulScalar(oY, oVS))
		return e.ArgMax(st, gamma, &onehot)
	}), func() bool {
		if vp == nil {
			return false // u_a/d_a is not ready yet
		}
		if out.arm != nil {
			out.arm(onehot)
		}
		oO, oRR, oVP = e.Mask(onehot), e.Mask(rr), e.Mask(vp)
		return true
	}, func() bool {
		vv := e.MulRows(oO, oVP, D) // o_a is an integer: no rescaling
		or := e.MulElem(oO, oRR)
		var rt uint64
		for _, w := range or {
			rt += w
		}
		if out.reward != nil {
			out.reward(rt)
		}
		oV, oOR = e.Mask(vv), e.Mask(or)
		return true
	}, func() bool {
		tw = e.TruncStart(e.Outer(oV, oU, D))
		tb = e.TruncStart(e.MulRows(oOR, oX, D))
		return true
	}, func() bool {
		subInPlace(l.winv, tw.Result())
		addInPlace(l.b, tb.Result())
		return true
	})
	g.Go(main)
	return g
}

// scaleV110 returns the Proc of the Sherman–Morrison factor v′_a = u_a / d_a:
// the reciprocal of d_a ∈ [1, 2] (‖x‖ ≤ 1 and W_a ⪰ I put x·W_a⁻¹x in
// [0, 1]), then one product with u_a, opened already.
func (l *learner) scaleV110(den []uint64, recip, vp *[]uint64, u func() *mpc.Open) *mpc.Proc {
	e := l.e
	var oR *mpc.Open
	var t *mpc.Trunc
	p := e.NewProc()
	p.Then(mpc.Later(func() *mpc.Proc { return e.Reciprocal(den, 1, 2, l.iters, recip) }),
		func() bool {
			oR = e.Mask(*recip)
			return true
		}, func() bool {
			t = e.TruncStart(e.MulRows(oR, u(), l.dim))
			return true
		}, func() bool {
			*vp = t.Result()
			return true
		})
	return p
}
