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
	// Gaussian returns x plus Gaussian noise of standard deviation sigma.
	Gaussian(x, sigma float64) (float64, error)
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

// unitSigma is the standard deviation the secure library adds for
// sensitivity 1 at the reference (ε, δ) below; its σ scales linearly with
// the sensitivity, which lets Gaussian ask it for any σ. It is computed once
// and never changes.
var unitSigma = noise.SigmaForGaussian(1, 1, gaussianRefEpsilon, gaussianRefDelta)

const (
	gaussianRefEpsilon = 1.0
	gaussianRefDelta   = 1e-5
)

// Gaussian implements Noise with the library's secure Gaussian sampler
// (crypto/rand, a binomial approximation snapped to a power-of-two grid), at
// exactly the requested standard deviation: the caller calibrates σ to its
// own (ε, δ) accounting, such as the classic 2Δ² ln(1.25/δ)/ε² variance.
func (SecureNoise) Gaussian(x, sigma float64) (float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("gaussian noise: sigma %v must be positive and finite", sigma)
	}
	v, err := noise.Gaussian().AddNoiseFloat64(x, 1, sigma/unitSigma, gaussianRefEpsilon, gaussianRefDelta)
	if err != nil {
		return 0, fmt.Errorf("gaussian noise: %w", err)
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

// Gaussian implements Noise (Box–Muller on the seeded stream).
func (s SeededNoise) Gaussian(x, sigma float64) (float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("gaussian noise: sigma %v must be positive and finite", sigma)
	}
	u1, err := Uniform(s.Rand)
	if err != nil {
		return 0, err
	}
	u2, err := Uniform(s.Rand)
	if err != nil {
		return 0, err
	}
	return x + sigma*math.Sqrt(-2*math.Log(1-u1))*math.Cos(2*math.Pi*u2), nil
}

// GaussianSigma is the standard deviation of the classic Gaussian mechanism
// for (epsilon, delta)-DP of a query with L2 sensitivity delta2:
// σ² = 2 Δ² ln(1.25/δ) / ε² (Dwork and Roth 2014, Theorem A.1). The theorem
// holds only for ε < 1; for larger ε this σ does not give (ε, δ)-DP (use
// AnalyticGaussianSigma).
func GaussianSigma(sensitivity, epsilon, delta float64) float64 {
	return math.Sqrt(2*sensitivity*sensitivity*math.Log(1.25/delta)) / epsilon
}

// AnalyticGaussianSigma is the standard deviation of the analytic Gaussian
// mechanism (Balle and Wang 2018, "Improving the Gaussian Mechanism for
// Differential Privacy", Theorem 8) for (epsilon, delta)-DP of a query with
// L2 sensitivity: the smallest σ whose privacy loss meets (ε, δ) exactly,
// valid for every ε > 0. It is Google's library's SigmaForGaussian, a
// binary search that returns a σ within 0.1 % above the exact one, never
// below it. It returns 0 when no σ > 0 is needed or representable (δ ≥ 1, or
// ε so large that e^ε overflows); callers check for that.
func AnalyticGaussianSigma(sensitivity, epsilon, delta float64) float64 {
	return noise.SigmaForGaussian(1, sensitivity, epsilon, delta)
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
