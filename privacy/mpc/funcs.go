package mpc

import "math/bits"

// Plus returns the opening of x + k for public values k (length 1 applies
// to every element): the same mask, a shifted opened value.
func (o *Open) Plus(k []uint64) *Open {
	c := *o
	c.Value = make([]uint64, o.n)
	for i := range c.Value {
		kk := k[0]
		if len(k) > 1 {
			kk = k[i]
		}
		c.Value[i] = o.Value[i] + kk
	}
	return &c
}

// Len returns the number of values opened.
func (o *Open) Len() int { return o.n }

// MulFixed returns a Proc computing the fixed-point product a ⊙ b into *out:
// one round to open both, one for the truncation.
func (e *Engine) MulFixed(a, b []uint64, out *[]uint64) *Proc {
	var oa, ob *Open
	var t *Trunc
	return e.NewProc(func() bool {
		oa, ob = e.Mask(a), e.Mask(b)
		return true
	}, func() bool {
		t = e.TruncStart(e.MulElem(oa, ob))
		return true
	}, func() bool {
		*out = t.Result()
		return true
	})
}

// ReciprocalGuess returns the public coefficients (α, β) of the linear
// initial guess x₀ = α − β·d for 1/d on [lo, hi]: the minimax choice, whose
// relative error |1 − d·x₀| is at most (hi−lo)²/(4·lo·hi + (lo+hi)²) — 1/17
// on [1, 2].
func ReciprocalGuess(lo, hi float64) (alpha, beta, err0 float64) {
	beta = 8 / (4*lo*hi + (lo+hi)*(lo+hi))
	alpha = beta * (lo + hi)
	return alpha, beta, 1 - beta*lo*hi
}

// Reciprocal returns a Proc computing 1/d for shares d of values known to
// lie in [lo, hi] ⊂ (0, ∞), with iters Newton–Raphson iterations
// x_{k+1} = x_k(2 − d·x_k) from the linear minimax guess x₀ = α − β·d.
//
// The iterations are evaluated in product form: with e = 1 − d·x₀,
// x_k = x₀(1+e)(1+e²)(1+e⁴)…(1+e^{2^{k−1}}), the same numbers as Newton's
// recursion, but e^{2^j} and the running product can be computed side by
// side, so k iterations cost k+1 multiplications in sequence instead of 2k
// (2k+3 rounds with their truncations). The
// relative error after k iterations is e^{2^k}: on [1, 2] three iterations
// reach 2^-32. Unlike the paper's exp-based guess (fit for [1, c] with
// c ≈ 10), a linear guess needs no exponential; Sherman–Morrison's
// denominator 1 + xᵀW⁻¹x lies in [1, 2] when ‖x‖ ≤ 1 and W ⪰ I.
func (e *Engine) Reciprocal(d []uint64, lo, hi float64, iters int, out *[]uint64) *Proc {
	fx := e.fx
	alpha, beta, _ := ReciprocalGuess(lo, hi)
	var x0, ee, acc []uint64
	var od *Open
	var tr, ta, te, tbd, tad, tbd2 *Trunc
	encA, encB := fx.Encode(alpha), fx.Encode(beta)
	p := e.NewProc(func() bool {
		od = e.Mask(d)
		return true
	}, func() bool {
		tr = e.TruncStart(e.MulElem(od, od))
		tbd = e.TruncStart(Scale(d, encB))
		tad = e.TruncStart(Scale(d, encA))
		return true
	}, func() bool {
		tbd2 = e.TruncStart(Scale(tr.Result(), encB))
		return true
	}, func() bool {
		// x₀ = α − β·d; e = 1 − d·x₀ = 1 − α·d + β·d².
		x0 = e.AddConst(Scale(tbd.Result(), ^uint64(0)), encA)
		ee = e.AddConst(Add(Scale(tad.Result(), ^uint64(0)), tbd2.Result()), fx.One())
		acc = x0
		return true
	})
	for k := range iters {
		last := k == iters-1
		var oa, oe *Open
		p.Then(func() bool {
			oa, oe = e.Mask(acc), e.Mask(ee)
			return true
		}, func() bool {
			ta = e.TruncStart(e.MulElem(oa, oe.Plus([]uint64{fx.One()})))
			if !last {
				te = e.TruncStart(e.MulElem(oe, oe))
			}
			return true
		}, func() bool {
			acc = ta.Result()
			if !last {
				ee = te.Result()
			}
			return true
		})
	}
	p.Then(func() bool {
		*out = acc
		return true
	})
	return p
}

// Exp returns a Proc computing e^x ≈ (1 + x/2^k)^(2^k) by k repeated
// squarings (the paper uses k = 8): one division by 2^k, then k squarings
// of two rounds each (product, truncation): 2k+1 rounds.
func (e *Engine) Exp(x []uint64, k int, out *[]uint64) *Proc {
	var y []uint64
	var t *Trunc
	p := e.NewProc(func() bool {
		t = e.ShiftStart(x, uint(k))
		return true
	}, func() bool {
		y = e.AddConst(t.Result(), e.fx.One())
		return true
	})
	for range k {
		var o *Open
		var sq *Trunc
		p.Then(func() bool {
			o = e.Mask(y)
			return true
		}, func() bool {
			sq = e.TruncStart(e.MulElem(o, o))
			return true
		}, func() bool {
			y = sq.Result()
			return true
		})
	}
	p.Then(func() bool {
		*out = y
		return true
	})
	return p
}

// LTZ returns a Proc computing arithmetic shares of [x < 0] (the integers 0
// or 1) for the shares x: the MSB on binary shares, then B2A. Eight rounds
// for two parties.
func (e *Engine) LTZ(x []uint64, out *[]uint64) *Proc {
	var msb []uint64
	p := e.NewProc()
	p.Then(Run(e.MSB(x, &msb)))
	var conv *Proc
	p.Then(func() bool {
		conv = e.B2A(msb, out)
		return true
	}, func() bool {
		_, _, done := conv.advance()
		return done
	})
	return p
}

// Less returns a Proc computing arithmetic shares of [a < b] element-wise
// (the sign of a − b; correct while |a − b| < 2^63).
func (e *Engine) Less(a, b []uint64, out *[]uint64) *Proc { return e.LTZ(Sub(a, b), out) }

// SetSampler gives the dealer the stream its private samples are drawn from
// (tie-breaking permutations here; a protocol's own samples through Dealt).
func (e *Engine) SetSampler(g *PRG) { e.sampler = g }

// Sampler returns the dealer's sample stream (nil on a party).
func (e *Engine) Sampler() *PRG { return e.sampler }

// DealtPermutation returns this party's shares of a uniformly random
// permutation of 0…n−1 that the dealer draws from its sampler.
func (e *Engine) DealtPermutation(n int) []uint64 {
	return e.Dealt(n, func(dst []uint64) { copy(dst, Permutation(e.sampler, n)) })
}

// Permutation returns a uniformly random permutation of 0…n−1 drawn from g
// (Fisher–Yates with unbiased bounded draws).
func Permutation(g *PRG, n int) []uint64 {
	p := make([]uint64, n)
	for i := range p {
		p[i] = uint64(i)
	}
	for i := n - 1; i > 0; i-- {
		j := boundedDraw(g, uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// boundedDraw returns a uniform integer in [0, n) (Lemire's method).
func boundedDraw(g *PRG, n uint64) uint64 {
	hi, lo := bits.Mul64(g.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(g.Uint64(), n)
		}
	}
	return hi
}

// TieBits returns the number of bits ArgMax appends to each score for its
// tie-breaking key, enough for n arms.
func TieBits(n int) uint { return uint(bits.Len(uint(n - 1))) }

// ArgMax returns a Proc computing arithmetic shares of the one-hot vector
// (integers 0/1) of the largest of the shares x, ties broken uniformly at
// random by gamma: shares of a uniformly random permutation of 0…n−1 from
// the dealer (DealtPermutation).
//
// The paper finds every maximum with Algorithm 2, multiplies by a shared
// random permutation γ and runs Algorithm 2 again. We fold γ into the
// comparison key instead: k_a = x_a·2^b + γ_a with 2^b ≥ n, a local
// operation. The keys are distinct, the largest key belongs to a largest
// score, and among tied scores the one with the largest γ wins — a uniform
// choice, as γ is a uniform permutation the dealer draws. One pass of
// Algorithm 2 then suffices: n(n−1)/2 comparisons k_i − k_j < 0 in one batch
// (the other half is their complement, as keys never tie), each row's n−1
// results ANDed on binary shares in ⌈log₂(n−1)⌉ rounds, one B2A. Rounds for
// two parties: 7 + ⌈log₂(n−1)⌉ + 1. The scores must satisfy
// |x| < 2^(62−b).
func (e *Engine) ArgMax(x, gamma []uint64, out *[]uint64) *Proc {
	n := len(x)
	if n == 1 {
		return e.NewProc(func() bool {
			*out = e.Public([]uint64{1})
			return true
		})
	}
	type pair struct{ i, j int }
	var pairs []pair
	for i := range n {
		for j := i + 1; j < n; j++ {
			pairs = append(pairs, pair{i, j})
		}
	}
	diffs := keyDiffs(x, gamma)
	var lt []uint64 // lt[k] = [k_i < k_j] for pairs[k]
	p := e.NewProc()
	p.Then(Run(e.MSB(diffs, &lt)))
	// rows[i] holds "i beats j" for every j ≠ i.
	rows := make([][]uint64, n)
	var and *And
	var width int
	p.Then(func() bool {
		if and == nil {
			for k, pr := range pairs {
				beats := e.NotBit(lt[k : k+1])[0] // k_i > k_j
				rows[pr.i] = append(rows[pr.i], beats)
				rows[pr.j] = append(rows[pr.j], lt[k])
			}
			width = n - 1
		} else {
			res := e.AndResult(and)
			and = nil
			half := width / 2
			for i := range rows {
				next := res[i*half : (i+1)*half : (i+1)*half]
				if width%2 == 1 {
					next = append(next, rows[i][width-1])
				}
				rows[i] = next
			}
			width = (width + 1) / 2
		}
		if width == 1 {
			return true
		}
		var xs, ys []uint64
		for i := range rows {
			for k := 0; k+1 < width; k += 2 {
				xs = append(xs, rows[i][k])
				ys = append(ys, rows[i][k+1])
			}
		}
		and = e.AndStart(xs, ys)
		return false
	})
	var conv *Proc
	p.Then(func() bool {
		col := make([]uint64, n)
		for i := range rows {
			col[i] = rows[i][0]
		}
		conv = e.B2A(col, out)
		return true
	}, func() bool {
		_, _, done := conv.advance()
		return done
	})
	return p
}

// keyDiffs returns k_i − k_j for every pair i < j, row by row, of the keys
// k_i = x_i·2^b + γ_i (b = TieBits(len(x))) that break the scores' ties:
// the comparisons ArgMax and ArgMaxOr batch.
func keyDiffs(x, gamma []uint64) []uint64 {
	n := len(x)
	b := TieBits(n)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = x[i]<<b + gamma[i]
	}
	diffs := make([]uint64, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			diffs = append(diffs, keys[i]-keys[j])
		}
	}
	return diffs
}
