package samba

import "math"

// softmax pulls arm i with probability e^{μ̂_i/τ} / Σ_j e^{μ̂_j/τ}: each data
// owner sends e^{μ̂_i/τ}, comp matches.
type softmax struct {
	single
	noUpdate
}

func (softmax) Name() string      { return "softmax" }
func (softmax) Matching(int) bool { return true }
func (softmax) ComputeScore(c *ScoreContext) float64 {
	return math.Exp(mean(c) / c.Params.Tau)
}
