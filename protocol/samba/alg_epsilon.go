package samba

import "math"

// epsilonGreedy explores with fixed probability ε, else pulls the best
// empirical mean.
type epsilonGreedy struct {
	single
	argmaxOnly
	noUpdate
	sharedCoin
}

func (epsilonGreedy) Name() string { return "epsilon_greedy" }

func (epsilonGreedy) ComputeScore(c *ScoreContext) float64 {
	if c.Coin < c.Params.Epsilon {
		return epsilonExplore
	}
	return mean(c)
}

// epsilonDecreasing explores with probability f_ε(t) = min(1, 1/ln t), or
// 1/log₂ t with params.epsilon_schedule = "log2" (the paper's prototype).
type epsilonDecreasing struct {
	single
	argmaxOnly
	noUpdate
	sharedCoin
}

func (epsilonDecreasing) Name() string { return "epsilon_decreasing" }

func (epsilonDecreasing) ComputeScore(c *ScoreContext) float64 {
	eps := 1 / math.Log(float64(c.T))
	if c.Params.EpsilonSchedule == "log2" {
		eps = 1 / math.Log2(float64(c.T))
	}
	if c.Coin < math.Min(1, eps) {
		return epsilonExplore
	}
	return mean(c)
}
