package mpc

import "math"

// Fused truncations. A truncation (Trunc) opens c = x + r and leaves each
// party with shares of its result t = P(c) + m, where P(c) is public and
// the shares of m are affine in the dealer's shares of r′ and r₆₃ with
// public coefficients:
//
//	m = (1 − 2c₆₃)·r₆₃·2^(63−l) − r′.
//
// That is an opening of t whose mask the dealer knows up to a public sign:
// Trunc.Open returns it, and a product in the next round uses it as it
// would an operand opened with Mask — without opening t again, which saves
// the round a Mask of t would cost. The dealer, who does not know the sign,
// supplies the products of the mask's components with the other operand's
// separately (two words where a plain opening needs one, four when both
// operands are fused), and the parties combine them with the public
// coefficients. Nothing new is opened, so the parties' views are those of
// the truncation alone: c, uniform.

// component is one term of a mask Σ_k coef_k·v_k: v holds this party's
// shares of a value the dealer knows (on the dealer, the value), coef the
// public coefficient of each element, or nil for the constant c.
type component struct {
	v    []uint64
	coef []uint64
	c    uint64
}

// at returns the coefficient of element i.
func (k component) at(i int) uint64 {
	if k.coef == nil {
		return k.c
	}
	return k.coef[i]
}

// components returns o's mask as components.
func (o *Open) components() []component {
	if o.comps == nil {
		return []component{{v: o.mask, c: 1}}
	}
	return o.comps
}

// fused reports whether o's mask is not a plain dealer mask.
func (o *Open) fused() bool { return o.comps != nil }

// Open returns the truncation's result as an opening that products
// (MulElem, MulScalar, Dot, MatVec, Outer, MulRows) take as an operand,
// once the round that opened c is complete: no further round is needed to
// open the result. Its products cost the dealer more correction words than a
// plain opening's (see the top of fused.go).
func (t *Trunc) Open() *Open {
	e, l := t.e, t.l
	n := len(t.low)
	o := &Open{n: n, done: true, Value: e.alloc(n), mask: e.alloc(n)}
	top, low, sign := e.alloc(n), e.alloc(n), e.alloc(n)
	for i := range n {
		if e.party == Dealer {
			top[i] = (t.r[i] >> 63) << (63 - l)
			low[i] = (t.r[i] &^ (1 << 63)) >> l
			continue
		}
		c := t.c.Value[i]
		c63 := c >> 63
		sign[i] = 1 - 2*c63
		top[i] = t.top[i] << (63 - l)
		low[i] = t.low[i]
		o.Value[i] = c63<<(63-l) + (c&^(1<<63))>>l - truncOffset>>l
		o.mask[i] = sign[i]*top[i] - low[i]
	}
	o.comps = []component{{v: top, coef: sign}, {v: low, c: ^uint64(0)}}
	return o
}

// Times returns the opening of k·x for the opening o of x and a public
// integer k.
func (o *Open) Times(k uint64) *Open {
	c := &Open{n: o.n, done: true, Value: Scale(o.Value, k), mask: Scale(o.mask, k)}
	for _, cp := range o.components() {
		if cp.coef == nil {
			c.comps = append(c.comps, component{v: cp.v, c: cp.c * k})
		} else {
			c.comps = append(c.comps, component{v: cp.v, coef: Scale(cp.coef, k)})
		}
	}
	return c
}

// AddOpen returns the opening of x + y for openings a of x and b of y:
// both values and masks add, and the mask keeps both operands' components.
func AddOpen(a, b *Open) *Open {
	return &Open{n: a.n, done: true, Value: Add(a.Value, b.Value), mask: Add(a.mask, b.mask),
		comps: append(append([]component{}, a.components()...), b.components()...)}
}

// SharesOf returns this party's shares of the value o opened: the public
// value (added by party 0) plus the share of the mask. The dealer gets
// zeros.
func (e *Engine) SharesOf(o *Open) []uint64 {
	out := e.alloc(o.n)
	if e.party == Dealer {
		return out
	}
	copy(out, o.mask)
	if e.party == 0 {
		for i, v := range o.Value {
			out[i] += v
		}
	}
	return out
}

// term is one product a[i]·b[j] added to output k.
type term struct{ k, i, j int }

// termKey names the terms of one product's shape: its kind and the
// operands' lengths.
type termKey struct {
	kind      byte
	n, m, dim int
}

// terms returns the terms of a product's shape, built once per engine: a
// protocol repeats the same shapes every step.
func (e *Engine) terms(k termKey, build func() []term) []term {
	if t, ok := e.termCache[k]; ok {
		return t
	}
	if e.termCache == nil {
		e.termCache = map[termKey][]term{}
	}
	t := build()
	e.termCache[k] = t
	return t
}

// mulTerms returns shares of out[k] = Σ a[i]·b[j] over the terms of k, for
// openings of which at least one is fused. Per pair of mask components the
// dealer supplies the products summed per output when both coefficients
// are constants, and term by term otherwise.
func (e *Engine) mulTerms(a, b *Open, n int, terms []term) []uint64 {
	out := e.alloc(n)
	if e.party != Dealer {
		for _, t := range terms {
			da, db := a.Value[t.i], b.Value[t.j]
			x := da*b.mask[t.j] + a.mask[t.i]*db
			if e.party == 0 {
				x += da * db
			}
			out[t.k] += x
		}
	}
	for _, ca := range a.components() {
		for _, cb := range b.components() {
			if ca.coef == nil && cb.coef == nil {
				d := e.dealt(n, false, func(dst []uint64) {
					for _, t := range terms {
						dst[t.k] += ca.v[t.i] * cb.v[t.j]
					}
				})
				k := ca.c * cb.c
				for i := range out {
					out[i] += k * d[i]
				}
				continue
			}
			d := e.dealt(len(terms), false, func(dst []uint64) {
				for x, t := range terms {
					dst[x] = ca.v[t.i] * cb.v[t.j]
				}
			})
			for x, t := range terms {
				out[t.k] += ca.at(t.i) * cb.at(t.j) * d[x]
			}
		}
	}
	return out
}

// guessBits is the fractional bits of ReciprocalOpen's initial guess's
// coefficients: the guess 2^k·x₀ = a − b·d has integer coefficients, so
// it costs no truncation, and d·(a − b·d) stays far below the ring's limit.
const guessBits = 5

// ReciprocalGuessBits returns Reciprocal's minimax guess x₀ = α − β·d on
// [lo, hi] with both coefficients rounded to k fractional bits — the
// integers a = round(α·2^k), b = round(β·2^k) — and the guess's largest
// relative error |1 − d·x₀| on [lo, hi] (at the ends or the vertex).
func ReciprocalGuessBits(lo, hi float64, k uint) (a, b uint64, err0 float64) {
	alpha, beta, _ := ReciprocalGuess(lo, hi)
	s := math.Ldexp(1, int(k))
	a, b = uint64(math.Round(alpha*s)), uint64(math.Round(beta*s))
	af, bf := float64(a)/s, float64(b)/s
	e := func(d float64) float64 { return math.Abs(1 - d*(af-bf*d)) }
	err0 = max(e(lo), e(hi))
	if v := af / (2 * bf); v > lo && v < hi {
		err0 = max(err0, e(v))
	}
	return a, b, err0
}

// ReciprocalOpen is Reciprocal on an opening d (plain or fused) with every
// truncated product taken fused (Trunc.Open) into the next product instead
// of being opened again, and the initial guess's coefficients rounded to
// guessBits fractional bits (ReciprocalGuessBits: relative error 1/16
// instead of 1/17 on [1, 2]) so that the guess is local: e = 1 − d·x₀ is
// one truncated product, and the iterations follow, one round each — 1 +
// iters rounds instead of 3 + 2·iters. *out is the result, as a fused
// opening. d·(a − b·d)·2^(2L+guessBits) must stay below 2^62: on [1, 2],
// L ≤ 27.
func (e *Engine) ReciprocalOpen(d *Open, lo, hi float64, iters int, out **Open) *Proc {
	fx := e.fx
	a, b, _ := ReciprocalGuessBits(lo, hi, guessBits)
	one := []uint64{fx.One()}
	// g = 2^k·x₀ = a − b·d, in fixed point: local.
	g := d.Times(-b).Plus([]uint64{a << fx.Frac})
	var te0 *Trunc
	var acc, ee *Open
	p := e.NewProc(func() bool {
		te0 = e.ShiftStart(e.MulElem(d, g), fx.Frac+guessBits) // d·x₀
		return true
	}, func() bool {
		ee = te0.Open().Times(^uint64(0)).Plus(one) // e = 1 − d·x₀
		return true
	})
	for k := range iters {
		last := k == iters-1
		var ta, te *Trunc
		p.Then(func() bool {
			if k == 0 {
				ta = e.ShiftStart(e.MulElem(g, ee.Plus(one)), fx.Frac+guessBits) // x₀(1 + e)
			} else {
				ta = e.TruncStart(e.MulElem(acc, ee.Plus(one)))
			}
			if !last {
				te = e.TruncStart(e.MulElem(ee, ee))
			}
			return true
		}, func() bool {
			acc = ta.Open()
			if !last {
				ee = te.Open()
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
