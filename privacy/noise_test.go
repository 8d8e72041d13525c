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
	const n = 20000
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
			d := 0.0
			for i, x := range xs {
				d = math.Max(d, math.Max(math.Abs(cdf(x)-float64(i)/n), math.Abs(cdf(x)-float64(i+1)/n)))
			}
			// The KS critical value at level 0.001 is 1.95/sqrt(n); the secure
			// sampler's grid adds a little (its granularity is scale/2^40).
			if limit := 1.95 / math.Sqrt(n); d > limit {
				t.Errorf("KS distance %v > %v: not Laplace(0, %v)", d, limit, b)
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
		if math.Abs(mean) > 4*sigma/math.Sqrt(n) || math.Abs(sd-sigma) > 0.03*sigma {
			t.Errorf("%T: mean %v, sd %v, want 0 and %v", src, mean, sd, sigma)
		}
	}
	if got, want := GaussianSigma(50, 1, 0.01), math.Sqrt(2*2500*math.Log(125)); math.Abs(got-want) > 1e-9 {
		t.Errorf("GaussianSigma = %v, want %v", got, want)
	}
}
