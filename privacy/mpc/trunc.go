package mpc

// Trunc is a division of a fixed-point product by 2^Frac in progress.
//
// It is the probabilistic truncation of Catrina and de Hoogh, in the form
// Dalskov, Escudero and Keller give it for the ring Z/2^64, which needs no
// bound on the statistical security parameter: the mask is uniform over the
// whole ring, and its top bit is shared apart. For each element the dealer
// knows a mask r, uniform in Z/2^64, that the parties draw from their dealer
// streams, and deals shares of r′ = (r mod 2^63) >> l and of its top bit
// r₆₃. The parties open c = x + 2^62 + r in one round. With x′ = x + 2^62 in
// [0, 2^63) — that is, |x| < 2^62, read as a two's-complement integer —
// the carry into bit 63 of x′ + (r mod 2^63) is w = c₆₃ ⊕ r₆₃, an affine
// function of the shared bit since c₆₃ is public, and
//
//	(c mod 2^63) >> l + w·2^(63−l) − r′ − 2^(62−l) = ⌊x / 2^l⌋ + ρ,
//
// where ρ ∈ {0, 1} is the carry out of the low l bits of x′ + r: one with
// probability (x mod 2^l)/2^l, so the result is x/2^l rounded up or down at
// random and unbiased.
//
// Correctness: the result is ⌊x/2^l⌋ or ⌊x/2^l⌋ + 1 — off by less than one
// unit in the last place, with any number of parties — for every x with
// |x| < 2^62; there is no failure probability. The caller keeps |x| below
// 2^62 (the fixed-point range: a product of two values with Frac fractional
// bits whose real magnitude is below 2^(62−2·Frac)).
//
// Security: c is x′ plus a uniform ring element, so it is uniform and
// independent of x; each party's share of c is masked by its own dealer
// stream. The dealer sees nothing.
//
// Cost per element: one word opened by every party, one round, and two
// correction words from the dealer to party 0.
type Trunc struct {
	e    *Engine
	c    *Open
	low  []uint64 // shares of r′ = (r mod 2^63) >> l
	top  []uint64 // shares of r₆₃
	done []uint64
	l    uint
	r    []uint64 // the dealer's masks r (nil on a party): Open needs them
}

// truncOffset is added to x before masking, so that x′ = x + truncOffset is
// nonnegative: the inputs of a truncation must satisfy |x| < truncOffset.
const truncOffset = 1 << 62

// TruncBound is the largest magnitude, as a two's-complement integer, of the
// shares' value that TruncStart and ShiftStart divide correctly: 2^62 − 1.
const TruncBound = truncOffset - 1

// TruncStart starts dividing the shares x by 2^Frac; it queues one opening
// for the round. The values must satisfy |x| ≤ TruncBound.
func (e *Engine) TruncStart(x []uint64) *Trunc { return e.ShiftStart(x, e.fx.Frac) }

// ShiftStart starts dividing the shares x by 2^l (0 < l ≤ 62), as
// TruncStart.
func (e *Engine) ShiftStart(x []uint64, l uint) *Trunc {
	n := len(x)
	r := e.alloc(n)
	e.draw(r, false) // a party's share of r; on the dealer, r itself
	t := &Trunc{e: e, l: l}
	if e.party == Dealer {
		t.r = r
	}
	t.low = e.dealt(n, false, func(dst []uint64) {
		for i, v := range r {
			dst[i] = (v &^ (1 << 63)) >> l
		}
	})
	t.top = e.dealt(n, false, func(dst []uint64) {
		for i, v := range r {
			dst[i] = v >> 63
		}
	})
	c := e.alloc(n)
	for i, v := range x {
		c[i] = v + r[i]
		if e.party == 0 {
			c[i] += truncOffset
		}
	}
	t.c = e.Reveal(c)
	return t
}

// Ready reports whether the result is available.
func (t *Trunc) Ready() bool { return t.done != nil || t.c.done }

// Result returns the shares of x / 2^l; call it once Ready.
func (t *Trunc) Result() []uint64 {
	if t.done != nil {
		return t.done
	}
	e, l := t.e, t.l
	out := e.alloc(len(t.low))
	for i, c := range t.c.Value {
		c63 := c >> 63
		// Shares of w = c₆₃ ⊕ r₆₃ = c₆₃ + r₆₃ − 2·c₆₃·r₆₃.
		w := t.top[i] - 2*c63*t.top[i]
		y := w<<(63-l) - t.low[i]
		if e.party == 0 {
			y += c63<<(63-l) + (c&^(1<<63))>>l - truncOffset>>l
		}
		out[i] = y
	}
	t.done = out
	return out
}
