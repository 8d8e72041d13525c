package mpc

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// SeedSize is the size of a PRG seed in bytes.
const SeedSize = 32

// Seed keys a PRG. Seeds that protect shares come from crypto/rand (or a CSPRNG
// seeded from it); only tests and the simulator derive them from a seed.
type Seed [SeedSize]byte

// PRG expands a seed into a stream of 64-bit words with ChaCha8, a
// cryptographically strong generator: two parties holding the same seed draw
// the same words, which is how shares are produced without sending them.
type PRG struct {
	c *rand.ChaCha8
}

// NewPRG returns the stream of seed.
func NewPRG(seed Seed) *PRG { return &PRG{c: rand.NewChaCha8(seed)} }

// Fill overwrites dst with the next len(dst) words of the stream.
func (g *PRG) Fill(dst []uint64) {
	for i := range dst {
		dst[i] = g.c.Uint64()
	}
}

// Uint64 returns the next word of the stream.
func (g *PRG) Uint64() uint64 { return g.c.Uint64() }

// DeriveSeed returns SHA-256(parent ‖ label): one negotiated seed gives each
// purpose (a pair's zero shares, a party's dealer stream) its own stream.
func DeriveSeed(parent Seed, label uint64) Seed {
	var b [SeedSize + 8]byte
	copy(b[:], parent[:])
	binary.LittleEndian.PutUint64(b[SeedSize:], label)
	return sha256.Sum256(b[:])
}
