package mpc

// WeightedGram returns shares of the rows Gram matrices
// G_k = Σ_j s_{j,k} x_j x_jᵀ, each row-major n×n, for the plain openings
// ss[j] (rows scalars s_{j,k}) and xs[j] (one vector of length n): the Gram
// matrices of a batch's contexts weighted by its one-hots, from openings
// the batch has made anyway, with nothing more opened.
//
// With each opened value written as its opening plus its mask, s = d_s +
// m_s and x = d_x + m_x, every term of s·x_i·x_l is public (party 0 adds
// it), linear in a mask (each party from its share), a public value times a
// product of two masks, or the product of three. The dealer deals the
// products: for each pair j, m_x m_xᵀ (its n(n+1)/2 distinct words) and
// m_s ⊗ m_x (rows·n words); and once, whatever the number of pairs,
// Σ_j m_s m_x m_xᵀ (rows·n(n+1)/2 words). The other way — the products
// y_{j,k} = s_{j,k} x_j (MulRows: rows·n dealt words a pair), opened, then
// SumOuter(y, x) — deals n(n+1)/2 words a pair fewer but opens rows·n
// words a pair from every party. Each G_k is symmetric: its entries i ≤ l
// are computed and mirrored. It panics on a fused operand or on lengths
// that do not fit (a programming error).
func (e *Engine) WeightedGram(ss, xs []*Open, rows, n int) []uint64 {
	if len(ss) != len(xs) {
		panic("mpc: WeightedGram of unequal numbers of operands")
	}
	for j := range ss {
		if ss[j].fused() || xs[j].fused() || ss[j].n != rows || xs[j].n != n {
			panic("mpc: WeightedGram takes plain openings of rows and n values")
		}
	}
	upper := upperEntries(n)
	tri := len(upper)    // the entries i ≤ l of a symmetric n×n matrix
	pair := tri + rows*n // a pair's dealt words: m_x m_xᵀ, then m_s ⊗ m_x
	// The pairs' products of two masks, pair by pair.
	c2 := e.dealt(len(ss)*pair, false, func(dst []uint64) {
		for j := range ss {
			sm, xm := ss[j].mask, xs[j].mask
			q, r := dst[j*pair:j*pair+tri], dst[j*pair+tri:(j+1)*pair]
			for t, il := range upper {
				q[t] = xm[il.i] * xm[il.l]
			}
			for k := range rows {
				for l := range n {
					r[k*n+l] = sm[k] * xm[l]
				}
			}
		}
	})
	// The products of three masks, summed over the pairs: one word an
	// output entry i ≤ l.
	out := e.dealt(rows*tri, false, func(dst []uint64) {
		for j := range ss {
			sm, xm := ss[j].mask, xs[j].mask
			for k := range rows {
				g, mk := dst[k*tri:(k+1)*tri], sm[k]
				for t, il := range upper {
					g[t] += mk * xm[il.i] * xm[il.l]
				}
			}
		}
	})
	// Each party's share of the rest, pair by pair: with A = [d_x d_xᵀ]
	// (party 0) + d_x m_xᵀ + m_x d_xᵀ + m_x m_xᵀ and P = d_x d_xᵀ,
	// G_k += d_{s,k} A + m_{s,k} P + d_x (m_s ⊗ m_x)_kᵀ + (m_s ⊗ m_x)_k d_xᵀ.
	a := e.alloc(tri)
	p := e.alloc(tri)
	for j := range ss {
		ds, sm := ss[j].Value, ss[j].mask
		dx, xm := xs[j].Value, xs[j].mask
		q, r := c2[j*pair:j*pair+tri], c2[j*pair+tri:(j+1)*pair]
		for t, il := range upper {
			i, l := il.i, il.l
			p[t] = dx[i] * dx[l]
			a[t] = dx[i]*xm[l] + xm[i]*dx[l] + q[t]
			if e.party == 0 {
				a[t] += p[t]
			}
		}
		for k := range rows {
			g, rk := out[k*tri:(k+1)*tri], r[k*n:(k+1)*n]
			dk, mk := ds[k], sm[k]
			for t, il := range upper {
				g[t] += dk*a[t] + mk*p[t] + dx[il.i]*rk[il.l] + dx[il.l]*rk[il.i]
			}
		}
	}
	// Mirror the entries i ≤ l into full row-major matrices.
	full := e.alloc(rows * n * n)
	for k := range rows {
		g, f := out[k*tri:(k+1)*tri], full[k*n*n:(k+1)*n*n]
		for t, il := range upper {
			f[il.i*n+il.l], f[il.l*n+il.i] = g[t], g[t]
		}
	}
	return full
}

// entry is a matrix entry's row and column.
type entry struct{ i, l int }

// upperEntries lists the entries i ≤ l of an n×n matrix, row by row: the
// distinct entries of a symmetric one, in the order WeightedGram deals and
// keeps them.
func upperEntries(n int) []entry {
	es := make([]entry, 0, n*(n+1)/2)
	for i := range n {
		for l := i; l < n; l++ {
			es = append(es, entry{i, l})
		}
	}
	return es
}
