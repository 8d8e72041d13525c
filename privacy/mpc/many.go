package mpc

import (
	"math/bits"
	"slices"
)

// Products of many factors in one round. Each factor x_i is opened once
// under a fresh mask m_i, and the product of a group G of factors is
//
//	∏_{i∈G} x_i = Σ_{S⊆G} (∏_{i∈G∖S} a_i)·(∏_{i∈S} b_i)·M_S,  M_S = ∏_{i∈S} m_i,
//
// with public a_i, b_i — for arithmetic factors x_i = δ_i + m_i (a_i = δ_i,
// b_i = 1); for bits opened under a binary mask, x_i = c_i ⊕ m_i = c_i +
// (1 − 2c_i)·m_i (a_i = c_i, b_i = 1 − 2c_i). The dealer supplies arithmetic
// shares of every M_S (2^|G| words a group), times a factor of its own
// choosing if asked (ManyResult). This is Beaver's trick with products of
// masks of any arity: one round for a product of any number of factors, the
// dealer's words growing as 2^|G|. The openings are uniform as for Mask.

// Many is a batch of products of groups of factors in progress.
type Many struct {
	o      *Open
	groups [][]int
	bin    bool
}

// AndManyStart queues the openings of the bits (bit 0 of the binary shares
// bits; the other bits must be zero) for the ANDs of groups, each a list of
// indices into bits; the result is arithmetic (ManyResult).
func (e *Engine) AndManyStart(bits []uint64, groups [][]int) *Many {
	b := make([]uint64, len(bits))
	for i, v := range bits {
		b[i] = v & 1
	}
	// The opened words' higher bits are the mask's: uniform, independent of
	// everything, and unused.
	return &Many{o: e.MaskBinary(b), groups: groups, bin: true}
}

// MulManyStart queues the openings of the arithmetic shares x for the
// products of groups, each a list of indices into x.
func (e *Engine) MulManyStart(x []uint64, groups [][]int) *Many {
	return &Many{o: e.Mask(x), groups: groups}
}

// manyWords returns the dealer's words for products of groups of these
// sizes.
func manyWords(sizes []int) int {
	n := 0
	for _, s := range sizes {
		n += 1 << s
	}
	return n
}

// ManyResult returns arithmetic shares of f_g·∏ group g for every group,
// once the round is complete. factor, called on the dealer only, fills the
// f_g the dealer chooses (nil: every f_g is 1).
func (e *Engine) ManyResult(g *Many, factor func(f []uint64)) []uint64 {
	o := g.o
	sizes := make([]int, len(g.groups))
	for i, grp := range g.groups {
		sizes[i] = len(grp)
	}
	mask := func(i int) uint64 {
		if g.bin {
			return o.mask[i] & 1
		}
		return o.mask[i]
	}
	d := e.dealt(manyWords(sizes), false, func(dst []uint64) {
		f := make([]uint64, len(g.groups))
		for i := range f {
			f[i] = 1
		}
		if factor != nil {
			factor(f)
		}
		pos := 0
		for gi, grp := range g.groups {
			// M_S for every subset S, by doubling: bit b of S is factor b.
			m := dst[pos : pos+1<<len(grp)]
			m[0] = f[gi]
			for b, idx := range grp {
				mi := mask(idx)
				for S := range 1 << b {
					m[S|1<<b] = m[S] * mi
				}
			}
			pos += len(m)
		}
	})
	out := make([]uint64, len(g.groups))
	if e.party == Dealer {
		return out
	}
	pos := 0
	coef := make([]uint64, 1)
	for gi, grp := range g.groups {
		// The public coefficient of every M_S, by doubling likewise:
		// a_i where i ∉ S, b_i where i ∈ S.
		coef = slices.Grow(coef[:0], 1<<len(grp))[:1<<len(grp)]
		coef[0] = 1
		for b, idx := range grp {
			a, bb := o.Value[idx], uint64(1)
			if g.bin {
				a &= 1
				bb = 1 - 2*a
			}
			for S := range 1 << b {
				coef[S|1<<b] = coef[S] * bb
				coef[S] *= a
			}
		}
		var s uint64
		for S, c := range coef {
			s += c * d[pos+S]
		}
		pos += len(coef)
		out[gi] = s
	}
	return out
}

// AndN is a batch of ANDs of several binary words each in progress
// (AndNStart).
type AndN struct {
	groups [][]*Open
}

// AndNStart queues the openings of the factors of every group: groups[g]
// lists the vectors (of one length) whose element-wise AND is the group's
// result. Each factor is opened once under a fresh binary mask; the result
// (AndNResult) needs the dealer's shares of the AND of every two or more
// of a group's masks: 2^k − k − 1 words an element for k factors.
func (e *Engine) AndNStart(groups [][][]uint64) *AndN {
	g := &AndN{}
	for _, fs := range groups {
		var os []*Open
		for _, f := range fs {
			os = append(os, e.MaskBinary(f))
		}
		g.groups = append(g.groups, os)
	}
	return g
}

// AndNResult returns the binary shares of each group's AND once the round
// is complete: ∧_i (c_i ⊕ m_i) = ⊕_S (∧_{i∉S} c_i) ∧ (∧_{i∈S} m_i) over the
// subsets S of the factors, with the opened c_i public, a party's own share
// of m_i for |S| = 1 and the dealer's shares for |S| ≥ 2.
func (e *Engine) AndNResult(g *AndN) [][]uint64 {
	out := make([][]uint64, len(g.groups))
	for gi, os := range g.groups {
		k, n := len(os), os[0].n
		res := make([]uint64, n)
		for S := 1; S < 1<<k; S++ {
			var ms []uint64 // shares of ∧_{i∈S} m_i
			if bits.OnesCount(uint(S)) == 1 {
				ms = os[bits.TrailingZeros(uint(S))].mask
			} else {
				ms = e.dealt(n, true, func(dst []uint64) {
					for j := range dst {
						v := ^uint64(0)
						for i, o := range os {
							if S>>i&1 == 1 {
								v &= o.mask[j]
							}
						}
						dst[j] = v
					}
				})
			}
			if e.party == Dealer {
				continue
			}
			for j := range res {
				c := ^uint64(0)
				for i, o := range os {
					if S>>i&1 == 0 {
						c &= o.Value[j]
					}
				}
				res[j] ^= c & ms[j]
			}
		}
		if e.party == 0 {
			for j := range res {
				c := ^uint64(0)
				for _, o := range os {
					c &= o.Value[j]
				}
				res[j] ^= c
			}
		}
		out[gi] = res
	}
	return out
}
