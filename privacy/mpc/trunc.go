package mpc

import "math/bits"

// Trunc is a division of a fixed-point product by 2^Frac in progress.
//
// With two parties each party shifts its own share (SecureML's local
// truncation): the result is off by at most one unit in the last place, and
// wrong with probability about |x|/2^63 per element.
//
// With more parties local shifting fails whenever the shares wrap around the
// ring, which they nearly always do, so the parties compute the number of
// wraps θ_x of the shares of x (the paper's Appendix C, Algorithm 1): with a
// dealer pair ([r], [θ_r]) they open z = x + r, count its wraps θ_z in public,
// and take θ_x = θ_z + β_xr − θ_r − η_xr, where β_xr are the local carries
// of x_p + r_p. Like the paper, we set η_xr — the wrap of x + r itself — to
// zero instead of computing it: it is nonzero with probability about
// |x|/2^63, the same order as the two-party error, and it costs a comparison.
// Each party then takes x_p >> Frac − θ_x,p · 2^(64−Frac), and party 0 adds
// ⌊P/2⌋ units against the floors' bias: the result is within P units of
// x/2^Frac. One round.
type Trunc struct {
	e      *Engine
	x      []uint64
	z      *Open
	beta   []uint64
	thetaR []uint64
	done   []uint64
	l      uint
}

// TruncStart starts dividing the shares x by 2^Frac. With two parties the
// result is ready at once; otherwise it queues one opening for the round.
func (e *Engine) TruncStart(x []uint64) *Trunc { return e.ShiftStart(x, e.fx.Frac) }

// ShiftStart starts dividing the shares x by 2^l (0 < l < 64), as TruncStart.
func (e *Engine) ShiftStart(x []uint64, l uint) *Trunc {
	t := &Trunc{e: e, x: x, l: l}
	if e.parties == 2 {
		t.done = make([]uint64, len(x))
		for i, v := range x {
			switch e.party {
			case 0:
				t.done[i] = uint64(int64(v) >> l)
			default:
				t.done[i] = -uint64(int64(-v) >> l)
			}
		}
		return t
	}
	n := len(x)
	r := make([]uint64, n)
	each := e.draw(r, false)
	t.thetaR = e.dealt(n, false, func(dst []uint64) {
		for i := range dst {
			col := make([]uint64, e.parties)
			for p := range each {
				col[p] = each[p][i]
			}
			dst[i] = uint64(wraps(col))
		}
	})
	z := make([]uint64, n)
	t.beta = make([]uint64, n)
	for i := range x {
		z[i] = x[i] + r[i]
		t.beta[i] = uint64(wraps([]uint64{x[i], r[i]}))
	}
	t.z = e.Reveal(z)
	return t
}

// Ready reports whether the result is available.
func (t *Trunc) Ready() bool { return t.done != nil || (t.z != nil && t.z.done) }

// Result returns the shares of x / 2^Frac; call it once Ready.
func (t *Trunc) Result() []uint64 {
	if t.done != nil {
		return t.done
	}
	e := t.e
	l := t.l
	out := make([]uint64, len(t.x))
	col := make([]uint64, e.parties)
	// Each of the P shifted shares drops a fraction uniform in [0, 1), so
	// their sum falls short by P/2 units on average; party 0 adds ⌊P/2⌋.
	var bias uint64
	if e.party == 0 {
		bias = uint64(e.parties / 2)
	}
	for i, v := range t.x {
		theta := t.beta[i] - t.thetaR[i]
		if e.party == 0 {
			for p := range col {
				col[p] = t.z.Shares[p][i]
			}
			theta += uint64(wraps(col))
		}
		out[i] = uint64(int64(v)>>l) - theta<<(64-l) + bias

	}
	t.done = out
	return out
}

// wraps returns θ with Σ_p s_p = s + θ·2^64, the shares and s read as
// two's-complement integers.
func wraps(shares []uint64) int64 {
	var hi int64
	var lo uint64
	for _, v := range shares {
		var c uint64
		lo, c = bits.Add64(lo, v, 0)
		hi += int64(c) + int64(v)>>63
	}
	return hi + int64(lo>>63)
}
