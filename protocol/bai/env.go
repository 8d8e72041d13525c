package bai

import (
	"context"
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Reward kinds of an environment.
const (
	RewardBernoulli = "bernoulli"
	RewardGaussian  = "gaussian"
)

// DefaultSigma is the standard deviation of Gaussian arms when none is given.
// The paper's Problem 2 (Gaussian, μ = 11, 10.8, 10.4 ×8) gives none; we use
// 0.5, the largest σ for which a Gaussian reward is as concentrated as a
// reward in [0, 1] (1/2-sub-Gaussian), so the Hoeffding radii of the
// elimination rules stay valid after rewards are mapped onto [0, 1].
const DefaultSigma = 0.5

// Environment is an agent's own copy of the common K-armed bandit as its
// [local.bai.agent] table or the spec's [simulation] table describes it:
// the family's simulated environment (SimulatedEnvironment) draws its
// rewards.
type Environment struct {
	// Reward is bernoulli or gaussian.
	Reward string `toml:"reward"`
	// Arms are the arms' means.
	Arms []float64 `toml:"arms"`
	// Sigma is the Gaussian arms' standard deviation.
	Sigma float64 `toml:"sigma"`
}

func (e *Environment) validate(where string) error {
	if e.Reward == "" {
		e.Reward = RewardBernoulli
	}
	if len(e.Arms) < 2 || len(e.Arms) > MaxArms {
		return fmt.Errorf("%s.arms: give the means of 2 to %d arms, got %d", where, MaxArms, len(e.Arms))
	}
	switch e.Reward {
	case RewardBernoulli:
		for i, m := range e.Arms {
			if !(m >= 0 && m <= 1) {
				return fmt.Errorf("%s.arms[%d]: a Bernoulli mean must be in [0, 1], got %v", where, i, m)
			}
		}
		if e.Sigma != 0 {
			return fmt.Errorf("%s.sigma: only Gaussian arms have a sigma", where)
		}
	case RewardGaussian:
		if e.Sigma == 0 {
			e.Sigma = DefaultSigma
		}
		if !(e.Sigma > 0) || math.IsInf(e.Sigma, 0) {
			return fmt.Errorf("%s.sigma: %v must be positive", where, e.Sigma)
		}
		for i, m := range e.Arms {
			if math.IsNaN(m) || math.IsInf(m, 0) {
				return fmt.Errorf("%s.arms[%d]: %v is not a finite mean", where, i, m)
			}
		}
	default:
		return fmt.Errorf("%s.reward: %q is not %s or %s", where, e.Reward, RewardBernoulli, RewardGaussian)
	}
	return nil
}

// pull draws a reward of arm k.
func (e *Environment) pull(k int, u *randsrc.Source) float64 {
	if e.Reward == RewardGaussian {
		return e.Arms[k] + e.Sigma*u.Normal()
	}
	if u.Float() < e.Arms[k] {
		return 1
	}
	return 0
}

// simulatedEnvironment is an agent's simulated environment: its arms,
// drawn from their own stream, every reward clamped to the session's
// public range [lo, hi] — as the agents clamped the rewards they drew
// before they asked an environment, and do still (normalize) — so that it
// answers what an agent accepts.
type simulatedEnvironment struct {
	arms   Environment
	lo, hi float64
	draw   *randsrc.Source
	// rewards is the storage of the last answer, reused: the environment
	// is Immediate, so its driver hands an answer to the agent, which is
	// done with it, before the agent asks again.
	rewards []float64
}

// Answer implements protocol.Environment: a pull of some of the arms.
func (e *simulatedEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	if q.Kind != protocol.QueryPull {
		return protocol.Outcome{}, fmt.Errorf("an agent's arms answer pulls, not a %s query", q.Kind)
	}
	rewards := e.rewards[:0]
	for _, k := range q.Arms {
		if k < 0 || k >= len(e.arms.Arms) {
			return protocol.Outcome{}, fmt.Errorf("a pull of an arm outside the agent's %d arms", len(e.arms.Arms))
		}
		rewards = append(rewards, clamp(e.arms.pull(k, e.draw), e.lo, e.hi))
	}
	if err := e.draw.Err(); err != nil {
		return protocol.Outcome{}, err
	}
	e.rewards = rewards
	return protocol.Outcome{ID: q.ID, Rewards: rewards}, nil
}

// Immediate implements protocol.Environment.
func (*simulatedEnvironment) Immediate() bool { return true }

// Close implements protocol.Environment.
func (*simulatedEnvironment) Close() error { return nil }

// clamp returns r clamped into [lo, hi].
func clamp(r, lo, hi float64) float64 {
	return math.Min(hi, math.Max(lo, r))
}

// normalize maps a reward onto [0, 1] with the session's public reward
// range, clamping what falls outside.
func normalize(r, lo, hi float64) float64 {
	v := (r - lo) / (hi - lo)
	return math.Min(1, math.Max(0, v))
}
