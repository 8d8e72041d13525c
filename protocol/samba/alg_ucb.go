package samba

import "math"

// ucb pulls the largest μ̂_i + √(2 ln t / n_i).
type ucb struct {
	single
	argmaxOnly
	noUpdate
	stateDecided
}

func (ucb) Name() string { return "ucb" }

func (ucb) ComputeScore(c *ScoreContext) float64 {
	return mean(c) + math.Sqrt(2*math.Log(float64(c.T))/float64(c.N))
}
