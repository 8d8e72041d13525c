package mpc

// NewtonSchulz returns a Proc refining approximate inverses of the
// consecutive dim×dim row-major matrices W_k of w (opened, fixed point):
// from X₀ = c·x_k, with x the shares of a previous approximation and c a
// public fixed-point scale, iters iterations X ← X(2I − W_k X), the result
// into *out as a plain opening. The approximations are held scaled by
// 2^shift — x, every iterate and the result are 2^shift·X — so that X₀,
// whose entries c shrinks, keeps shift more fractional bits: W·(2^shift X)
// is divided by 2^(Frac+shift) to give W X, and X(2I − W X) by 2^Frac as
// usual. With c ≥ 2^−shift the scaled X₀ is no smaller than x, and the
// precision of the start no longer falls as c does. The caller keeps
// 2^shift·‖W X‖ within the fixed-point range. The error E = I − W X squares
// at each iteration, so it converges when X₀W_k has its eigenvalues in
// (0, 2): a batch update of the contextual bandit keeps W additively, grows
// it by at most B unit-norm outer products, and starts from
// c = 2/(2 + B) times the previous inverse (docs/protocols/mpccb.md,
// "Batches"). Rounds: 2 + 4·iters — each product's truncation, then its
// result opened plainly (Mask). Fused truncations (Trunc.Open) would save
// half the rounds, but a product with a fused operand costs the dealer a
// correction word per term of the product — dim³ a matrix product, where a
// plain opening costs one per output, dim² — and these products dominate a
// batch: at dim = 20 and 10 matrices, fused iterations made a batch of 100
// steps 5.5 million correction words, plain ones 1.9 million (a plain
// X also makes every later W⁻¹x cheap). The words opened are the two
// operands of each product and the truncations'.
func (e *Engine) NewtonSchulz(w *Open, x []uint64, c uint64, shift uint, dim, iters int, out **Open) *Proc {
	sq := dim * dim
	two := make([]uint64, w.n)
	for k := range w.n / sq {
		for i := range dim {
			two[k*sq+i*dim+i] = 2 * e.fx.One()
		}
	}
	var t *Trunc
	var cur *Open
	p := e.NewProc(func() bool {
		t = e.TruncStart(Scale(x, c)) // X₀ = c·x
		return true
	}, func() bool {
		cur = e.Mask(t.Result())
		return true
	})
	for range iters {
		var tw, tx *Trunc
		var ow *Open
		p.Then(func() bool {
			tw = e.ShiftStart(e.MatMul(w, cur, dim), e.fx.Frac+shift) // W X
			return true
		}, func() bool {
			ow = e.Mask(tw.Result())
			return true
		}, func() bool {
			tx = e.TruncStart(e.MatMul(cur, ow.Times(^uint64(0)).Plus(two), dim)) // X(2I − W X)
			return true
		}, func() bool {
			cur = e.Mask(tx.Result())
			return true
		})
	}
	p.Then(func() bool {
		*out = cur
		return true
	})
	return p
}
