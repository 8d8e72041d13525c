package privacy

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestLaplaceDistributions checks both samplers against the Laplace CDF with
// a Kolmogorov–Smirnov statistic.
func TestLaplaceDistributions(t *testing.T) {
	const n = 100000
	tests := []struct {
		name string
		src  Noise
	}{
		{"secure", SecureNoise{}},
		{"seeded", SeededNoise{Rand: rand.NewChaCha8([32]byte{1})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const sens, eps = 0.5, 2.0 // scale 0.25
			b := sens / eps
			xs := make([]float64, n)
			for i := range xs {
				v, err := tt.src.Laplace(3, sens, eps)
				if err != nil {
					t.Fatal(err)
				}
				xs[i] = v - 3
			}
			sort.Float64s(xs)
			cdf := func(x float64) float64 {
				if x < 0 {
					return 0.5 * math.Exp(x/b)
				}
				return 1 - 0.5*math.Exp(-x/b)
			}
			ks := func(cdf func(float64) float64) float64 {
				d := 0.0
				for i, x := range xs {
					d = math.Max(d, math.Max(math.Abs(cdf(x)-float64(i)/n), math.Abs(cdf(x)-float64(i+1)/n)))
				}
				return d
			}
			// The KS critical value at level 1e-6 is 2.7/sqrt(n) (at 0.001,
			// 1.95/sqrt(n), which the secure sampler, drawing afresh each
			// run, would cross once in 1,000 runs); the secure sampler's grid
			// adds a little (its granularity is scale/2^40).
			limit := 2.7 / math.Sqrt(n)
			if d := ks(cdf); d > limit {
				t.Errorf("KS distance %v > %v: not Laplace(0, %v)", d, limit, b)
			}
			// The test can fail: a scale 10 % off is 0.0175 away at its worst.
			b *= 1.1
			if d := ks(cdf); d <= limit {
				t.Errorf("KS distance %v to Laplace(0, %v) ≤ %v: the test cannot tell a scale 10 %% off", d, b, limit)
			}
		})
	}
}

func TestLaplaceRejectsBadArguments(t *testing.T) {
	for _, src := range []Noise{SecureNoise{}, SeededNoise{Rand: rand.NewChaCha8([32]byte{})}} {
		for _, c := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {1, math.NaN()}, {math.Inf(1), 1}} {
			if _, err := src.Laplace(0, c[0], c[1]); err == nil {
				t.Errorf("%T accepted sensitivity %v epsilon %v", src, c[0], c[1])
			}
		}
	}
}

func TestSeededNoiseIsDeterministic(t *testing.T) {
	a := SeededNoise{Rand: rand.NewChaCha8([32]byte{7})}
	b := SeededNoise{Rand: rand.NewChaCha8([32]byte{7})}
	for range 100 {
		x, _ := a.Laplace(0, 1, 1)
		y, _ := b.Laplace(0, 1, 1)
		if x != y {
			t.Fatal("same seed, different noise")
		}
	}
}

// TestGaussianSigma checks both samplers' standard deviation and mean.
func TestGaussianSigma(t *testing.T) {
	const n, sigma = 40000, 3.5
	for _, src := range []Noise{SecureNoise{}, SeededNoise{Rand: rand.NewChaCha8([32]byte{3})}} {
		var sum, sq float64
		for range n {
			v, err := src.Gaussian(10, sigma)
			if err != nil {
				t.Fatal(err)
			}
			sum += v - 10
			sq += (v - 10) * (v - 10)
		}
		mean, sd := sum/n, math.Sqrt(sq/n)
		// 5 standard errors: a correct secure sampler, drawn afresh each
		// run, fails once in 1.7 million runs (at 4, once in 16,000).
		if math.Abs(mean) > 5*sigma/math.Sqrt(n) || math.Abs(sd-sigma) > 0.03*sigma {
			t.Errorf("%T: mean %v, sd %v, want 0 and %v", src, mean, sd, sigma)
		}
	}
	if got, want := GaussianSigma(50, 1, 0.01), math.Sqrt(2*2500*math.Log(125)); math.Abs(got-want) > 1e-9 {
		t.Errorf("GaussianSigma = %v, want %v", got, want)
	}
}

// TestAnalyticGaussianSigma checks the analytic Gaussian mechanism's σ
// against Balle and Wang's Theorem 8, computed here independently: the
// Gaussian mechanism with σ on a query of L2 sensitivity s is (ε, δ)-DP
// exactly when Φ(s/(2σ) − εσ/s) − e^ε Φ(−s/(2σ) − εσ/s) ≤ δ. The σ returned
// meets it, 0.2 % less would not (it is tight), and below ε = 1 it is no
// larger than the classic σ, which is a sufficient but loose bound there;
// at ε = 8 the classic σ falls short of (ε, δ)-DP.
func TestAnalyticGaussianSigma(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	deltaOf := func(sigma, s, eps float64) float64 {
		a, b := s/(2*sigma), eps*sigma/s
		return phi(a-b) - math.Exp(eps)*phi(-a-b)
	}
	for _, c := range []struct{ s, eps, delta float64 }{
		{1, 0.1, 1e-5}, {1, 0.5, 0.01}, {50, 0.99, 0.01}, {50, 1, 0.01}, {3, 1.17, 0.01}, {1, 4, 1e-6}, {1000, 8, 0.01}, {1, 30, 0.01},
	} {
		sigma := AnalyticGaussianSigma(c.s, c.eps, c.delta)
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			t.Errorf("%+v: σ = %v", c, sigma)
			continue
		}
		if d := deltaOf(sigma, c.s, c.eps); d > c.delta*(1+1e-9) {
			t.Errorf("%+v: σ = %v gives δ = %v, more than asked", c, sigma, d)
		}
		if d := deltaOf(sigma*0.998, c.s, c.eps); d <= c.delta {
			t.Errorf("%+v: σ = %v is not tight: 0.998σ still gives δ = %v", c, sigma, d)
		}
		if classic := GaussianSigma(c.s, c.eps, c.delta); c.eps < 1 && sigma > classic {
			t.Errorf("%+v: analytic σ %v above the classic %v", c, sigma, classic)
		}
	}
	if classic := GaussianSigma(1, 8, 0.01); deltaOf(classic, 1, 8) <= 0.01 {
		t.Errorf("the classic σ %v at ε = 8 meets δ = 0.01; the test's premise is wrong", classic)
	}
	if got := AnalyticGaussianSigma(1, 800, 0.01); got != 0 {
		t.Errorf("σ at ε = 800 (e^ε overflows) = %v, want 0, which callers refuse", got)
	}
}
