package mpc

// Products of opened values. Each operand was opened with Mask: every party
// knows δ = x − m and holds a share of m; the dealer holds m. A product of x
// and y is
//
//	x·y = δx·δy + δx·m_y + m_x·δy + m_x·m_y,
//
// where the first term is public (added by party 0), the middle terms are
// local, and the dealer supplies shares of m_x·m_y: parties 1…P−1 draw theirs
// from their dealer streams, party 0 receives a correction. An operand opened
// once serves every product it takes part in.

// MulElem returns shares of the element-wise product a ⊙ b (no rescaling).
func (e *Engine) MulElem(a, b *Open) []uint64 {
	n := a.n
	if a.fused() || b.fused() {
		return e.mulTerms(a, b, n, e.terms(termKey{kind: 'e', n: n}, func() []term {
			terms := make([]term, n)
			for i := range terms {
				terms[i] = term{i, i, i}
			}
			return terms
		}))
	}
	c := e.dealt(n, false, func(dst []uint64) {
		for i := range dst {
			dst[i] = a.mask[i] * b.mask[i]
		}
	})
	for i := range c {
		c[i] += a.Value[i]*b.mask[i] + a.mask[i]*b.Value[i]
		if e.party == 0 {
			c[i] += a.Value[i] * b.Value[i]
		}
	}
	return c
}

// MulScalar returns shares of s·v for an opened scalar s (length 1) and
// vector v.
func (e *Engine) MulScalar(s, v *Open) []uint64 {
	n := v.n
	if s.fused() || v.fused() {
		return e.mulTerms(s, v, n, e.terms(termKey{kind: 's', n: n}, func() []term {
			terms := make([]term, n)
			for i := range terms {
				terms[i] = term{i, 0, i}
			}
			return terms
		}))
	}
	c := e.dealt(n, false, func(dst []uint64) {
		for i := range dst {
			dst[i] = s.mask[0] * v.mask[i]
		}
	})
	ds, ms := s.Value[0], s.mask[0]
	for i := range c {
		c[i] += ds*v.mask[i] + ms*v.Value[i]
		if e.party == 0 {
			c[i] += ds * v.Value[i]
		}
	}
	return c
}

// Dot returns shares of the dot products of consecutive blocks of length
// dim of a and b: out[k] = Σ_i a[k·dim+i]·b[k·dim+i]. If b has length dim
// it is shared by every block.
func (e *Engine) Dot(a, b *Open, dim int) []uint64 {
	blocks := a.n / dim
	bo := func(k int) int {
		if b.n == dim {
			return 0
		}
		return k * dim
	}
	if a.fused() || b.fused() {
		return e.mulTerms(a, b, blocks, e.terms(termKey{kind: 'd', n: a.n, m: b.n, dim: dim}, func() []term {
			terms := make([]term, 0, a.n)
			for k := range blocks {
				for i := range dim {
					terms = append(terms, term{k, k*dim + i, bo(k) + i})
				}
			}
			return terms
		}))
	}
	c := e.dealt(blocks, false, func(dst []uint64) {
		for k := range dst {
			var s uint64
			for i := range dim {
				s += a.mask[k*dim+i] * b.mask[bo(k)+i]
			}
			dst[k] = s
		}
	})
	for k := range c {
		ao, bk := k*dim, bo(k)
		var s uint64
		for i := range dim {
			da, db := a.Value[ao+i], b.Value[bk+i]
			s += da*b.mask[bk+i] + a.mask[ao+i]*db
			if e.party == 0 {
				s += da * db
			}
		}
		c[k] += s
	}
	return c
}

// MatVec returns shares of M_k·v_k for the consecutive dim×dim row-major
// matrices M_k in m and the vectors v_k of v: consecutive blocks of length
// dim, one per matrix, or, if v has length dim, one vector for every
// matrix. A batch of matrix–vector products opened in one round.
func (e *Engine) MatVec(m, v *Open, dim int) []uint64 {
	mats := m.n / (dim * dim)
	vo := func(k int) int {
		if v.n == dim {
			return 0
		}
		return k * dim
	}
	if m.fused() || v.fused() {
		return e.mulTerms(m, v, mats*dim, e.terms(termKey{kind: 'm', n: m.n, m: v.n, dim: dim}, func() []term {
			terms := make([]term, 0, m.n)
			for k := range mats {
				for r := range dim {
					for i := range dim {
						terms = append(terms, term{k*dim + r, (k*dim+r)*dim + i, vo(k) + i})
					}
				}
			}
			return terms
		}))
	}
	c := e.dealt(mats*dim, false, func(dst []uint64) {
		for k := range mats {
			vm := v.mask[vo(k):]
			for r := range dim {
				var s uint64
				row := m.mask[(k*dim+r)*dim:]
				for i := range dim {
					s += row[i] * vm[i]
				}
				dst[k*dim+r] = s
			}
		}
	})
	for k := range mats {
		vv, vm := v.Value[vo(k):], v.mask[vo(k):]
		for r := range dim {
			off := (k*dim + r) * dim
			dm, mm := m.Value[off:off+dim], m.mask[off:off+dim]
			var s uint64
			for i := range dim {
				s += dm[i]*vm[i] + mm[i]*vv[i]
				if e.party == 0 {
					s += dm[i] * vv[i]
				}
			}
			c[k*dim+r] += s
		}
	}
	return c
}

// MatMul returns shares of the products A_k·B_k of consecutive dim×dim
// row-major matrices A_k of a and B_k of b, opened in one round: the
// D × D products of a Newton–Schulz iteration, every arm's at once. If b
// holds one matrix it is shared by every A_k.
func (e *Engine) MatMul(a, b *Open, dim int) []uint64 {
	sq := dim * dim
	mats := a.n / sq
	bo := func(k int) int {
		if b.n == sq {
			return 0
		}
		return k * sq
	}
	if a.fused() || b.fused() {
		return e.mulTerms(a, b, mats*sq, e.terms(termKey{kind: 'M', n: a.n, m: b.n, dim: dim}, func() []term {
			terms := make([]term, 0, mats*sq*dim)
			for k := range mats {
				for i := range dim {
					for j := range dim {
						for l := range dim {
							terms = append(terms, term{k*sq + i*dim + j, k*sq + i*dim + l, bo(k) + l*dim + j})
						}
					}
				}
			}
			return terms
		}))
	}
	c := e.dealt(mats*sq, false, func(dst []uint64) {
		for k := range mats {
			am, bm := a.mask[k*sq:(k+1)*sq], b.mask[bo(k):bo(k)+sq]
			for i := range dim {
				for j := range dim {
					var s uint64
					for l := range dim {
						s += am[i*dim+l] * bm[l*dim+j]
					}
					dst[k*sq+i*dim+j] = s
				}
			}
		}
	})
	for k := range mats {
		av, am := a.Value[k*sq:(k+1)*sq], a.mask[k*sq:(k+1)*sq]
		bv, bm := b.Value[bo(k):bo(k)+sq], b.mask[bo(k):bo(k)+sq]
		for i := range dim {
			for j := range dim {
				var s uint64
				for l := range dim {
					x, y := av[i*dim+l], bv[l*dim+j]
					s += x*bm[l*dim+j] + am[i*dim+l]*y
					if e.party == 0 {
						s += x * y
					}
				}
				c[k*sq+i*dim+j] += s
			}
		}
	}
	return c
}

// SumOuter returns shares of the rows matrices M_k = Σ_j y_{j,k} x_jᵀ, each
// row-major m×n, for the plain openings ys[j] (rows consecutive blocks
// y_{j,k} of length m) and xs[j] (one block of length n): a sum of outer
// products over the pairs, such as the Gram matrices of a batch's contexts
// weighted by its one-hots (m = n) or a batch's rewards times its contexts
// (m = 1). The dealer deals one word per output whatever the number of
// pairs — rows·m·n where the pairs' products one by one (Outer, MulRows)
// would take as many per pair. It panics on a fused operand or on lengths
// that do not fit (a programming error).
func (e *Engine) SumOuter(ys, xs []*Open, rows, m, n int) []uint64 {
	if len(ys) != len(xs) {
		panic("mpc: SumOuter of unequal numbers of operands")
	}
	for j := range ys {
		if ys[j].fused() || xs[j].fused() || ys[j].n != rows*m || xs[j].n != n {
			panic("mpc: SumOuter takes plain openings of rows·m and n values")
		}
	}
	mn := m * n
	c := e.dealt(rows*mn, false, func(dst []uint64) {
		for j := range ys {
			ym, xm := ys[j].mask, xs[j].mask
			for k := range rows {
				for i := range m {
					a, row := ym[k*m+i], dst[k*mn+i*n:k*mn+(i+1)*n]
					for l, b := range xm {
						row[l] += a * b
					}
				}
			}
		}
	})
	for j := range ys {
		yv, ym, xv, xm := ys[j].Value, ys[j].mask, xs[j].Value, xs[j].mask
		for k := range rows {
			for i := range m {
				dy, my := yv[k*m+i], ym[k*m+i]
				row := c[k*mn+i*n : k*mn+(i+1)*n]
				for l := range n {
					x := dy*xm[l] + my*xv[l]
					if e.party == 0 {
						x += dy * xv[l]
					}
					row[l] += x
				}
			}
		}
	}
	return c
}

// Outer returns shares of the outer products a_k b_kᵀ of consecutive blocks
// of length dim of a and b, each a row-major dim×dim matrix.
func (e *Engine) Outer(a, b *Open, dim int) []uint64 {
	blocks := a.n / dim
	if a.fused() || b.fused() {
		return e.mulTerms(a, b, blocks*dim*dim, e.terms(termKey{kind: 'o', n: a.n, dim: dim}, func() []term {
			terms := make([]term, 0, blocks*dim*dim)
			for k := range blocks {
				for i := range dim {
					for j := range dim {
						terms = append(terms, term{(k*dim+i)*dim + j, k*dim + i, k*dim + j})
					}
				}
			}
			return terms
		}))
	}
	c := e.dealt(blocks*dim*dim, false, func(dst []uint64) {
		for k := range blocks {
			for i := range dim {
				ai := a.mask[k*dim+i]
				row := dst[(k*dim+i)*dim:]
				for j := range dim {
					row[j] = ai * b.mask[k*dim+j]
				}
			}
		}
	})
	for k := range blocks {
		av, am := a.Value[k*dim:(k+1)*dim], a.mask[k*dim:(k+1)*dim]
		bv, bm := b.Value[k*dim:(k+1)*dim], b.mask[k*dim:(k+1)*dim]
		for i := range dim {
			row := c[(k*dim+i)*dim : (k*dim+i+1)*dim]
			for j := range dim {
				s := av[i]*bm[j] + am[i]*bv[j]
				if e.party == 0 {
					s += av[i] * bv[j]
				}
				row[j] += s
			}
		}
	}
	return c
}

// Add returns a + b.
func Add(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// Sub returns a − b.
func Sub(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// Scale returns k·a for a public integer k.
func Scale(a []uint64, k uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = a[i] * k
	}
	return out
}

// AddConst returns the shares of a + k for one public value k added to every
// element (party 0 adds it).
func (e *Engine) AddConst(a []uint64, k uint64) []uint64 {
	out := make([]uint64, len(a))
	copy(out, a)
	if e.party == 0 {
		for i := range out {
			out[i] += k
		}
	}
	return out
}

// AddPublic returns the shares of a + k for public values k (party 0 adds
// them).
func (e *Engine) AddPublic(a, k []uint64) []uint64 {
	out := make([]uint64, len(a))
	copy(out, a)
	if e.party == 0 {
		for i := range out {
			out[i] += k[i]
		}
	}
	return out
}

// MulRows returns shares of s_k·v_k for consecutive blocks v_k of length
// dim of v and the scalars s (one per block); if v has length dim it is
// shared by every block.
func (e *Engine) MulRows(s, v *Open, dim int) []uint64 {
	blocks := s.n
	vo := func(k int) int {
		if v.n == dim {
			return 0
		}
		return k * dim
	}
	if s.fused() || v.fused() {
		return e.mulTerms(s, v, blocks*dim, e.terms(termKey{kind: 'r', n: s.n, m: v.n, dim: dim}, func() []term {
			terms := make([]term, 0, blocks*dim)
			for k := range blocks {
				for i := range dim {
					terms = append(terms, term{k*dim + i, k, vo(k) + i})
				}
			}
			return terms
		}))
	}
	c := e.dealt(blocks*dim, false, func(dst []uint64) {
		for k := range blocks {
			for i := range dim {
				dst[k*dim+i] = s.mask[k] * v.mask[vo(k)+i]
			}
		}
	})
	for k := range blocks {
		ds, ms, o := s.Value[k], s.mask[k], vo(k)
		for i := range dim {
			x := ds*v.mask[o+i] + ms*v.Value[o+i]
			if e.party == 0 {
				x += ds * v.Value[o+i]
			}
			c[k*dim+i] += x
		}
	}
	return c
}
