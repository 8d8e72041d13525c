// Package randsrc turns a role's source of randomness (an io.Reader:
// crypto/rand in a real session, a seeded ChaCha8 stream in a simulation)
// into the draws bandit environments need — uniforms, normals, binomials —
// quickly and without package-level state.
package randsrc

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Source draws from an io.Reader: directly from a generator that has Uint64
// (the simulator's ChaCha8), else through a buffer (crypto/rand).
type Source struct {
	gen interface{ Uint64() uint64 }
	buf *bufio.Reader
	err error
}

// New wraps r.
func New(r io.Reader) *Source {
	if g, ok := r.(interface{ Uint64() uint64 }); ok {
		return &Source{gen: g}
	}
	return &Source{buf: bufio.NewReaderSize(r, 4096)}
}

// Err returns the first error reading the underlying source, if any; draws
// made after it are zero.
func (s *Source) Err() error { return s.err }

// Uint64 returns 64 random bits.
func (s *Source) Uint64() uint64 {
	if s.gen != nil {
		return s.gen.Uint64()
	}
	var b [8]byte
	if _, err := io.ReadFull(s.buf, b[:]); err != nil && s.err == nil {
		s.err = fmt.Errorf("reading randomness: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

// Float returns a uniform float64 in [0, 1).
func (s *Source) Float() float64 { return float64(s.Uint64()>>11) / (1 << 53) }

// Normal returns a standard normal draw (Box–Muller).
func (s *Source) Normal() float64 {
	a := 1 - s.Float() // (0, 1]
	return math.Sqrt(-2*math.Log(a)) * math.Cos(2*math.Pi*s.Float())
}

// Binomial returns a Binomial(n, p) draw by inverting its CDF with one
// uniform: O(n p) steps, exact, for the small n of unit purchases.
func (s *Source) Binomial(n int, p float64) int {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	}
	if p > 0.5 {
		return n - s.binomial(n, 1-p, math.Log(p))
	}
	return s.binomial(n, p, math.Log1p(-p))
}

// BinomialCached is Binomial with log(1−p) and log(p) given by a caller that
// draws for the same p many times.
func (s *Source) BinomialCached(n int, p, log1mp, logp float64) int {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	}
	if p > 0.5 {
		return n - s.binomial(n, 1-p, logp)
	}
	return s.binomial(n, p, log1mp)
}

// binomial inverts the CDF of Binomial(n, p), p ≤ 1/2, logq = log(1−p).
func (s *Source) binomial(n int, p, logq float64) int {
	u := s.Float()
	q := 1 - p
	pk := math.Exp(float64(n) * logq) // P(X = 0)
	cdf := pk
	ratio := p / q
	k := 0
	for u >= cdf && k < n {
		pk *= ratio * float64(n-k) / float64(k+1)
		k++
		cdf += pk
	}
	return k
}
