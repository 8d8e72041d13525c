package privacy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/google/differential-privacy/go/v3/noise"
)

// Noise adds differential-privacy noise to values.
type Noise interface {
	// Laplace returns x plus Laplace noise calibrated for epsilon-DP of a
	// query with the given L1 sensitivity: its scale is sensitivity/epsilon.
	Laplace(x, sensitivity, epsilon float64) (float64, error)
}

// SecureNoise is the noise of real sessions: Google's differential-privacy
// library, which draws from crypto/rand and samples the Laplace distribution
// on a power-of-two grid with a geometric sampler, avoiding the
// floating-point attack on naive samplers (Mironov 2012).
type SecureNoise struct{}

// Laplace implements Noise.
func (SecureNoise) Laplace(x, sensitivity, epsilon float64) (float64, error) {
	if err := checkLaplace(sensitivity, epsilon); err != nil {
		return 0, err
	}
	v, err := noise.Laplace().AddNoiseFloat64(x, 1, sensitivity, epsilon, 0)
	if err != nil {
		return 0, fmt.Errorf("laplace noise: %w", err)
	}
	return v, nil
}

// SeededNoise draws Laplace noise by inverting the CDF of uniforms read from
// a seeded stream. It exists so that simulations replay exactly from a seed;
// it is not a secure sampler and never serves a real session.
type SeededNoise struct {
	Rand io.Reader
}

// Laplace implements Noise.
func (s SeededNoise) Laplace(x, sensitivity, epsilon float64) (float64, error) {
	if err := checkLaplace(sensitivity, epsilon); err != nil {
		return 0, err
	}
	u, err := Uniform(s.Rand)
	if err != nil {
		return 0, err
	}
	b := sensitivity / epsilon
	u -= 0.5 // in [-0.5, 0.5)
	if u == -0.5 {
		u = math.Nextafter(-0.5, 0)
	}
	return x - b*math.Copysign(1, u)*math.Log1p(-2*math.Abs(u)), nil
}

func checkLaplace(sensitivity, epsilon float64) error {
	if !(sensitivity > 0) || math.IsInf(sensitivity, 0) {
		return fmt.Errorf("laplace noise: sensitivity %v must be positive and finite", sensitivity)
	}
	if !(epsilon > 0) || math.IsInf(epsilon, 0) {
		return fmt.Errorf("laplace noise: epsilon %v must be positive and finite", epsilon)
	}
	return nil
}

// Uniform reads a float64 uniform in [0, 1) with 53 random bits from r.
func Uniform(r io.Reader) (float64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("reading randomness: %w", err)
	}
	return float64(binary.LittleEndian.Uint64(b[:])>>11) / (1 << 53), nil
}
