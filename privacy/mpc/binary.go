package mpc

// And is an AND of binary shares in progress: both operands are opened with
// binary masks in one round, then combined with the dealer's shares of the
// AND of the masks (Beaver's trick over GF(2), 64 gates per word).
type And struct {
	a, b *Open
}

// AndStart queues the openings of x AND y (element-wise on 64-bit words).
func (e *Engine) AndStart(x, y []uint64) *And {
	return &And{a: e.MaskBinary(x), b: e.MaskBinary(y)}
}

// AndResult returns the shares of x AND y once the round is complete.
func (e *Engine) AndResult(g *And) []uint64 {
	a, b := g.a, g.b
	c := e.dealt(a.n, true, func(dst []uint64) {
		for i := range dst {
			dst[i] = a.mask[i] & b.mask[i]
		}
	})
	for i := range c {
		c[i] ^= a.Value[i]&b.mask[i] ^ a.mask[i]&b.Value[i]
		if e.party == 0 {
			c[i] ^= a.Value[i] & b.Value[i]
		}
	}
	return c
}

// Xor returns a ⊕ b.
func Xor(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

// NotBit returns the shares of the complement of bit 0 of shares a (party 0
// flips it).
func (e *Engine) NotBit(a []uint64) []uint64 {
	out := make([]uint64, len(a))
	copy(out, a)
	if e.party == 0 {
		for i := range out {
			out[i] ^= 1
		}
	}
	return out
}

// MSB returns a Proc that computes binary shares of the most significant
// bit of the arithmetic shares x (the sign: 1 when x < 0 as a two's-
// complement integer), delivered at bit 0 of each word of *out.
//
// It is the A2B conversion of the paper's Appendix A.1, kept to the one bit
// that ltz needs: party p's share is a binary input that p alone holds; with
// more than two parties, carry-save adders (one AND round each, three
// numbers in, two out) reduce the P inputs to two; a Kogge–Stone
// parallel-prefix adder then computes the carry into bit 63 — one round for
// the generate bits and six levels for 64 bits — and the MSB is the XOR of
// the two inputs' top bits with that carry. Rounds: 7 for two parties, 7 +
// the number of carry-save levels for P (3 → 2 per level: 1 for P = 3, 3
// for P = 5, 5 for P = 10).
func (e *Engine) MSB(x []uint64, out *[]uint64) *Proc { return e.msb(x, out, false) }

// MSBMerged is MSB with the generate bits merged into the first
// Kogge–Stone level: g₁ = a∧b ⊕ (a⊕b)∧(a≪1)∧(b≪1) and p₁ = p∧(p≪1) in one
// round of ANDs of two and three factors (AndNStart), so one round fewer —
// 6 for two parties — for 5 dealer words an element more.
func (e *Engine) MSBMerged(x []uint64, out *[]uint64) *Proc { return e.msb(x, out, true) }

func (e *Engine) msb(x []uint64, out *[]uint64, merged bool) *Proc {
	n := len(x)
	inputs := make([][]uint64, e.parties)
	for p := range inputs {
		inputs[p] = make([]uint64, n)
		if p == e.party {
			copy(inputs[p], x)
		}
	}
	p := e.NewProc()
	// Carry-save reduction to two numbers.
	var csa *And
	var rest [][]uint64
	var triples [][3][]uint64
	// Carry-save reduction to two numbers: one round per level; the step
	// runs again after each round until two numbers are left.
	p.Then(func() bool {
		if csa != nil {
			maj := e.AndResult(csa)
			csa = nil
			next := make([][]uint64, 0, len(inputs))
			for k, t := range triples {
				m := Xor(maj[k*n:(k+1)*n], t[2])
				sum := Xor(Xor(t[0], t[1]), t[2])
				carry := make([]uint64, n)
				for i, v := range m {
					carry[i] = v << 1
				}
				next = append(next, sum, carry)
			}
			inputs = append(next, rest...)
		}
		if len(inputs) <= 2 {
			return true
		}
		triples, rest = nil, nil
		var xs, ys []uint64
		i := 0
		for ; i+3 <= len(inputs); i += 3 {
			a, b, c := inputs[i], inputs[i+1], inputs[i+2]
			triples = append(triples, [3][]uint64{a, b, c})
			xs = append(xs, Xor(a, c)...)
			ys = append(ys, Xor(b, c)...)
		}
		rest = inputs[i:]
		csa = e.AndStart(xs, ys)
		return false
	})
	// Kogge–Stone on the last two numbers.
	var g, pr, top []uint64
	var and *And
	first := uint(1) // the level the loop starts first
	if merged {
		first = 4
		var andN *AndN
		shl := func(v []uint64, k uint) []uint64 {
			o := make([]uint64, len(v))
			for i, w := range v {
				o[i] = w << k
			}
			return o
		}
		p.Then(func() bool {
			a, b := inputs[0], inputs[1]
			pr = Xor(a, b)
			top = pr
			andN = e.AndNStart([][][]uint64{{a, b}, {pr, shl(a, 1), shl(b, 1)}, {pr, shl(pr, 1)}})
			return true
		}, func() bool {
			res := e.AndNResult(andN)
			g, pr = Xor(res[0], res[1]), res[2]
			sg, sp := shl(g, 2), shl(pr, 2) // level 2 starts

			and = e.AndStart(append(append([]uint64{}, pr...), pr...), append(sg, sp...))
			return true
		})
	} else {
		p.Then(func() bool {
			a, b := inputs[0], inputs[1]
			pr = Xor(a, b)
			top = pr
			and = e.AndStart(a, b)
			return true
		})
	}
	for k := first; k < 64; k <<= 1 {
		last := k == 32
		p.Then(func() bool {
			res := e.AndResult(and)
			if g == nil {
				g = res
			} else {
				g = Xor(g, res[:n])
				if len(res) > n {
					pr = res[n:]
				}
			}
			sg := make([]uint64, n)
			for i, v := range g {
				sg[i] = v << k
			}
			if last {
				and = e.AndStart(pr, sg)
				return true
			}
			sp := make([]uint64, n)
			for i, v := range pr {
				sp[i] = v << k
			}
			and = e.AndStart(append(append([]uint64{}, pr...), pr...), append(sg, sp...))
			return true
		})
	}
	p.Then(func() bool {
		res := e.AndResult(and)
		g = Xor(g, res[:n])
		bit := make([]uint64, n)
		for i := range bit {
			bit[i] = (top[i]>>63 ^ g[i]>>62) & 1
		}
		*out = bit
		return true
	})
	return p
}

// B2A returns a Proc that converts binary shares of bits (bit 0 of each
// word; the other bits must be zero) into arithmetic shares of the integers
// 0 and 1 in *out. The dealer supplies a random bit r in both sharings; the
// parties open b ⊕ r = c and take [b] = c + [r] − 2c[r]. One round.
func (e *Engine) B2A(bits []uint64, out *[]uint64) *Proc {
	n := len(bits)
	var c *Open
	var ra []uint64
	return e.NewProc(func() bool {
		rb := make([]uint64, n)
		each := e.draw(rb, true)
		for i := range rb {
			rb[i] &= 1
		}
		ra = e.dealt(n, false, func(dst []uint64) {
			for i := range dst {
				var v uint64
				for p := range each {
					v ^= each[p][i] & 1
				}
				dst[i] = v
			}
		})
		masked := Xor(bits, rb)
		for i := range masked {
			masked[i] &= 1
		}
		c = e.RevealBinary(masked)
		return true
	}, func() bool {
		res := make([]uint64, n)
		for i := range res {
			ci := c.Value[i] & 1
			res[i] = ra[i] - 2*ci*ra[i]
			if e.party == 0 {
				res[i] += ci
			}
		}
		*out = res
		return true
	})
}
