package samba

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// Masks hide the scores from comp (§4.1.2, Theorem 2). Every data owner
// derives the same mask of step t and iteration l from seed_α:
//
//   - an iteration that takes an argmax gets a random strictly increasing
//     affine map v ↦ a·v + b, a = 2^x with x uniform in [−20, 20] and b/a
//     uniform in [−10, 10], which keeps the order and hides the ratios;
//   - an iteration that matches probabilities gets the paper's
//     multiplicative mask α = 2^x, x uniform in [−20, 20] — proportions must
//     survive, so comp learns the ratios of the scores of that iteration.
//
// Floating point keeps the order exactly except between scores closer than
// about 1e-15 of their size, and the proportions to about 1e-16; a decision
// differs from the standard algorithm's only if a draw falls that close to
// a boundary.
type mask struct{ a, b float64 }

func (m mask) apply(v float64) float64 { return m.a*v + m.b }

// maskFor derives the mask of step t, iteration l.
func maskFor(seedAlpha []byte, t uint64, l int, matching bool) mask {
	u := derive(seedAlpha, t, uint32(l))
	a := math.Exp2(40*u[0] - 20)
	if matching {
		return mask{a: a}
	}
	return mask{a: a, b: a * (20*u[1] - 10)}
}

// coinFor derives ε-greedy's shared coin of step t from seed_ε.
func coinFor(seedEps []byte, t uint64) float64 { return derive(seedEps, t, 0)[0] }

// derive returns two uniforms in [0, 1) from SHA-256(seed ‖ t ‖ l).
func derive(seed []byte, t uint64, l uint32) [2]float64 {
	var buf [64]byte // seeds are 32 bytes: the input stays on the stack
	in := append(buf[:0], seed...)
	in = binary.BigEndian.AppendUint64(in, t)
	in = binary.BigEndian.AppendUint32(in, l)
	sum := sha256.Sum256(in)
	return [2]float64{
		float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53),
		float64(binary.BigEndian.Uint64(sum[8:16])>>11) / (1 << 53),
	}
}
