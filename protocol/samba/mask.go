package samba

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math"
)

// Masks hide the scores from comp (§4.1.2, Theorem 2). Every data owner
// derives the same mask of step t and iteration l from seed_α (seedPRF):
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

// maskFor derives the mask of step t, iteration l from seed_α's function.
func maskFor(alpha *seedPRF, t uint64, l int, matching bool) mask {
	u := alpha.uniforms(t, uint32(l))
	a := math.Exp2(40*u[0] - 20)
	if matching {
		return mask{a: a}
	}
	return mask{a: a, b: a * (20*u[1] - 10)}
}

// coinFor derives ε-greedy's shared coin of step t from seed_ε's function.
func coinFor(eps *seedPRF, t uint64) float64 { return eps.uniforms(t, 0)[0] }

// seedPRF is the pseudo-random function of a 32-byte seed (seed_α or
// seed_ε) from which every data owner derives the same masks or coins:
// AES-256 keyed by the seed, applied to the block t ‖ l ‖ 0 (big-endian
// 64 and 32 bits, then 32 zero bits). Each (t, l) is a distinct block, and
// AES under a secret uniform key is a pseudo-random permutation, which is
// indistinguishable from a pseudo-random function until about 2^64 blocks
// — far beyond a session's one or two a step. A mask costs about 75 ns
// this way (AES-NI; BenchmarkMask), where SHA-256(seed ‖ t ‖ l), which this
// replaced, took about 140 ns, a fifth of a data owner's work per step in a
// simulation.
//
// A seedPRF must be used by one goroutine at a time: it encrypts in a buffer of
// its own (a block on the stack would escape to the heap through the
// cipher.Block interface, two allocations a call).
type seedPRF struct {
	block cipher.Block
	buf   [aes.BlockSize]byte
}

// newSeedPRF returns the function of seed, which must be 32 bytes long.
func newSeedPRF(seed []byte) (*seedPRF, error) {
	if len(seed) != 32 {
		return nil, fmt.Errorf("a seed of %d bytes, want 32", len(seed))
	}
	b, err := aes.NewCipher(seed)
	if err != nil {
		return nil, err
	}
	return &seedPRF{block: b}, nil
}

// uniforms returns two uniforms in [0, 1) for (t, l): the top 53 bits of
// each half of the function's block.
func (f *seedPRF) uniforms(t uint64, l uint32) [2]float64 {
	binary.BigEndian.PutUint64(f.buf[:8], t)
	binary.BigEndian.PutUint32(f.buf[8:12], l)
	clear(f.buf[12:])
	f.block.Encrypt(f.buf[:], f.buf[:])
	return [2]float64{
		float64(binary.BigEndian.Uint64(f.buf[:8])>>11) / (1 << 53),
		float64(binary.BigEndian.Uint64(f.buf[8:])>>11) / (1 << 53),
	}
}
