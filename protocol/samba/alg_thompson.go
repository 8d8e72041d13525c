package samba

import (
	"math"

	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// thompson pulls the largest of independent draws θ_i ~ Beta(s_i+1, n_i−s_i+1),
// each data owner drawing its own from its own randomness.
type thompson struct {
	single
	argmaxOnly
	noUpdate
}

func (thompson) Name() string { return "thompson" }

func (thompson) ComputeScore(c *ScoreContext) float64 {
	return beta(c.Rand, float64(c.S+1), float64(c.N-c.S+1))
}

// beta draws Beta(a, b) as X/(X+Y) with X ~ Γ(a), Y ~ Γ(b).
func beta(r *randsrc.Source, a, b float64) float64 {
	x := gamma(r, a)
	y := gamma(r, b)
	return x / (x + y)
}

// gamma draws Γ(a, 1) for a ≥ 1 (Marsaglia and Tsang 2000); every shape
// Thompson sampling needs is at least 1.
func gamma(r *randsrc.Source, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.Normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
