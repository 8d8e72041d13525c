package randsrc

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBinomialMoments(t *testing.T) {
	s := New(rand.NewChaCha8([32]byte{9}))
	for _, c := range []struct {
		n int
		p float64
	}{{1, 0.3}, {10, 0.5}, {50, 0.1}, {50, 0.9}, {7, 0}, {7, 1}} {
		const draws = 40000
		var sum, sq float64
		for range draws {
			x := float64(s.Binomial(c.n, c.p))
			if x < 0 || x > float64(c.n) {
				t.Fatalf("Binomial(%d, %v) = %v", c.n, c.p, x)
			}
			sum += x
			sq += x * x
		}
		mean := sum / draws
		variance := sq/draws - mean*mean
		wantMean, wantVar := float64(c.n)*c.p, float64(c.n)*c.p*(1-c.p)
		if math.Abs(mean-wantMean) > 5*math.Sqrt(wantVar/draws)+1e-9 || math.Abs(variance-wantVar) > 0.05*wantVar+1e-9 {
			t.Errorf("Binomial(%d, %v): mean %v variance %v, want %v and %v", c.n, c.p, mean, variance, wantMean, wantVar)
		}
	}
}
