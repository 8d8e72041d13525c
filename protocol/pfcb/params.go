package pfcb

import (
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/privacy"
)

// Algorithms selectable with params.algorithm.
const (
	AlgPFCB         = "pfcb"
	AlgFCB          = "fcb"
	AlgNonFederated = "non_federated"
)

// Params are the public parameters of a P-FCB session: the paper's settings
// by default (§6.1).
type Params struct {
	// Algorithm is pfcb, fcb (the same schedule, true values) or
	// non_federated (no communication).
	Algorithm string `toml:"algorithm"`
	// Rounds is T.
	Rounds int64 `toml:"rounds"`
	// Alpha is the quality threshold α.
	Alpha float64 `toml:"alpha"`
	// Gamma is the safety margin γ of the oracle's quality threshold: the
	// learning agents ask the oracle for quality α + γ (FCB, Algorithm 1,
	// line 16). Without it, an optimistic (UCB) estimate of a producer whose
	// true quality lies just below α stays above α for the whole session, and
	// the oracle keeps buying sets that violate the constraint — on the
	// paper's normal instances, clustered at α, in one round of ten. The
	// paper leaves γ unset; we use 0.02. Regret is always scored at α.
	Gamma float64 `toml:"gamma"`
	// Rho is ρ in the per-unit revenue r_i = ρ q_i − c_i. The paper does not
	// give it; we use 1 (qualities and costs both lie in [0, 1]).
	Rho float64 `toml:"rho"`
	// Epsilon is the scale ε from which each communication round's budget
	// ε^z = ε/(2 ln T) + ε/2^{z+1} is drawn (§5.3, "total privacy budget"
	// in the paper's words). It is not the session's spend, which is
	// Σ_z ε^z per published value and twice that per pair (SessionSpend):
	// 0.845 ε and 1.69 ε at the paper's settings.
	Epsilon float64 `toml:"epsilon"`
	// Delta is δ of each release.
	Delta float64 `toml:"delta"`
	// TLo and THi bound the rounds in which agents communicate.
	TLo int64 `toml:"t_lo"`
	THi int64 `toml:"t_hi"`
	// Omega1 widens the confidence interval inside which a share is learned
	// from; Omega2 weighs what is learned (CheckandUpdate).
	Omega1 float64 `toml:"omega1"`
	Omega2 float64 `toml:"omega2"`
	// Zeta sets the pure-exploration phase: ⌈3 ln(nT) / (2 n ζ²)⌉ rounds. The
	// paper writes the phase as t ≤ 3 ln(γT)/(2nζ²) without giving γ or ζ; we
	// read γ as n and take ζ = 0.3 (24 rounds for n = 10, T = 100,000).
	Zeta float64 `toml:"zeta"`
	// FCBPool, SoloExplore and FederatedUCB are readings of the paper that
	// the defaults do not take; they exist for the sensitivity study of the
	// gap to the paper's EXP1 (experiment pfcb --sensitivity) and are off by
	// default.
	//
	// FCBPool: an fcb agent adds every other agent's exact share to its
	// totals at weight 1 — Algorithm 1's "Synchronise", pooling — instead
	// of passing it through CheckandUpdate (ω1, ω2) as P-FCB does. The paper
	// defines FCB both ways: "the non-private variant of P-FCB" (§6.1) and
	// Algorithm 1. It changes nothing for pfcb and non_federated.
	FCBPool bool `toml:"fcb_pool"`
	// FCBEveryRound: fcb agents communicate in every round 1 … T
	// (Algorithm 1's "Synchronise" in each round), not only at τ = 1, 2,
	// 4, … inside [t_lo, t_hi]. It changes nothing for pfcb and
	// non_federated.
	FCBEveryRound bool `toml:"fcb_every_round"`
	// SoloExplore: a non_federated agent explores for the single-agent
	// length ⌈3 ln T/(2ζ²)⌉ (n = 1: the baseline is Deva et al.'s
	// single-agent algorithm) instead of the federated ⌈3 ln(nT)/(2nζ²)⌉.
	SoloExplore bool `toml:"solo_explore"`
	// FederatedUCB: fcb agents use Algorithm 1's (FCB's, line 15) radius
	// √(3 ln(nt)/(2nW)) instead of √(3 ln t/(2W)); Algorithm 2 (P-FCB) does
	// not give its radius, and pfcb keeps √(3 ln t/(2W)).
	FederatedUCB bool `toml:"federated_ucb"`
	// BarrierTimeout is how long, in seconds, an agent of a real session
	// waits at a communication round for the other agents' shares.
	BarrierTimeout float64 `toml:"barrier_timeout"`
}

// DefaultParams are the paper's settings: T = 100,000, α = 0.4, ε = 1,
// δ = 0.01, t_lo = 200, t_hi = 40,000, ω1 = 0.1, ω2 = 10; and, where the paper
// gives none, ρ = 1, ζ = 0.3, γ = 0.02.
func DefaultParams() Params {
	return Params{Algorithm: AlgPFCB, Rounds: 100000, Alpha: 0.4, Gamma: 0.02, Rho: 1, Epsilon: 1, Delta: 0.01,
		TLo: 200, THi: 40000, Omega1: 0.1, Omega2: 10, Zeta: 0.3, BarrierTimeout: 60}
}

// MaxRounds bounds T.
const MaxRounds = 100_000_000

func (p Params) validate() error {
	switch p.Algorithm {
	case AlgPFCB, AlgFCB, AlgNonFederated:
	default:
		return fmt.Errorf("params.algorithm: %q is not one of %s, %s, %s", p.Algorithm, AlgPFCB, AlgFCB, AlgNonFederated)
	}
	pos := func(key string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("params.%s: %v must be positive and finite", key, v)
		}
		return nil
	}
	if p.Rounds < 1 || p.Rounds > MaxRounds {
		return fmt.Errorf("params.rounds: %d is out of range [1, %d]", p.Rounds, MaxRounds)
	}
	if !(p.Alpha > 0 && p.Alpha < 1) {
		return fmt.Errorf("params.alpha: %v is not in (0, 1)", p.Alpha)
	}
	if !(p.Gamma >= 0 && p.Alpha+p.Gamma < 1) {
		return fmt.Errorf("params.gamma: %v must be at least 0 and keep α + γ below 1", p.Gamma)
	}
	if !(p.Delta > 0 && p.Delta < 1) {
		return fmt.Errorf("params.delta: %v is not in (0, 1)", p.Delta)
	}
	for _, c := range []struct {
		key string
		v   float64
	}{{"rho", p.Rho}, {"epsilon", p.Epsilon}, {"omega1", p.Omega1}, {"omega2", p.Omega2}, {"zeta", p.Zeta}, {"barrier_timeout", p.BarrierTimeout}} {
		if err := pos(c.key, c.v); err != nil {
			return err
		}
	}
	if p.TLo < 1 || p.THi < p.TLo {
		return fmt.Errorf("params.t_lo, t_hi: [%d, %d] is not a range of rounds", p.TLo, p.THi)
	}
	if err := p.validateCommunication(); err != nil {
		return err
	}
	return p.validateNoise()
}

// validateNoise checks that every communication round of a pfcb session has
// a noise σ that is positive and finite for every capacity: an ε so large
// that no noise is needed (e^ε^z overflows) or so small that σ overflows
// would leave an agent unable to draw its noise in the middle of the
// session.
func (p Params) validateNoise() error {
	if p.Algorithm != AlgPFCB {
		return nil
	}
	for z := 1; z <= len(p.CommRounds()); z++ {
		lo, hi := p.Sigma(1, z), p.Sigma(MaxCapacity, z)
		if !(lo > 0) || math.IsInf(hi, 0) || math.IsNaN(hi) {
			return fmt.Errorf("params.epsilon, delta: communication round %d has ε^z = %v and δ = %v, for which the Gaussian noise "+
				"has no positive finite σ (%v for capacity 1, %v for capacity %d); choose an ε of a usable size",
				z, p.EpsilonZ(z), p.Delta, lo, hi, MaxCapacity)
		}
	}
	return nil
}

// validateCommunication checks that a federated session (pfcb, fcb)
// communicates at least once before its last round. The paper's agents
// communicate only in rounds t ∈ [t_lo, t_hi] (Algorithm 2, lines 9 and 26:
// "no communication occurs outside these rounds", §5.1) of the T rounds; a
// window that starts at or after T, or that holds no round τ = 1, 2, 4, …
// before T, makes the session non-federated without saying so: no share is
// ever published or learned and the result reports (ε, δ) = (0, 0).
// A share published in round T itself would spend privacy and teach nothing,
// as no round follows to use it. non_federated never communicates and
// ignores the window.
func (p Params) validateCommunication() error {
	if p.Algorithm == AlgNonFederated {
		return nil
	}
	if p.TLo >= p.Rounds {
		return fmt.Errorf("params.t_lo, rounds: agents share only from round t_lo = %d on, and the session has rounds = %d, "+
			"so they would never share what they learn; set t_lo below rounds (the paper uses 200 of 100,000), "+
			"or algorithm = %q for a session without communication", p.TLo, p.Rounds, AlgNonFederated)
	}
	for _, t := range p.CommRounds() {
		if t < p.Rounds {
			return nil
		}
	}
	return fmt.Errorf("params.t_lo, t_hi, rounds: agents share at rounds 1, 2, 4, 8, … that lie in [t_lo, t_hi] = [%d, %d], "+
		"and with rounds = %d none of them comes before the last round, so they would never share what they learn; "+
		"widen [t_lo, t_hi] to hold a power of two below rounds, or set algorithm = %q for a session without communication",
		p.TLo, p.THi, p.Rounds, AlgNonFederated)
}

// ExploreRounds is the length of the pure-exploration phase for n agents
// (for one agent if the session is non_federated with SoloExplore).
func (p Params) ExploreRounds(n int) int64 {
	if p.SoloExplore && p.Algorithm == AlgNonFederated {
		n = 1
	}
	nf := float64(n)
	return int64(math.Ceil(3 * math.Log(nf*float64(p.Rounds)) / (2 * nf * p.Zeta * p.Zeta)))
}

// CommRounds lists the communication rounds: t = τ for τ = 1, 2, 4, … inside
// [t_lo, t_hi] (Algorithm 2, lines 9 and 26, with τ doubling at each
// communication), and none for non_federated.
//
// With FCBEveryRound an fcb session communicates in every round.
func (p Params) CommRounds() []int64 {
	if p.Algorithm == AlgNonFederated {
		return nil
	}
	if p.Algorithm == AlgFCB && p.FCBEveryRound {
		out := make([]int64, p.Rounds)
		for i := range out {
			out[i] = int64(i) + 1
		}
		return out
	}
	var out []int64
	for tau := int64(1); tau <= p.Rounds && tau <= p.THi; tau *= 2 {
		if tau >= p.TLo {
			out = append(out, tau)
		}
	}
	return out
}

// EpsilonZ is the privacy budget of the z-th communication round (z from 1):
// ε^z = ε/(2 ln T) + ε/2^{z+1} (§5.3; we read the paper's log as natural).
func (p Params) EpsilonZ(z int) float64 {
	return p.Epsilon/(2*math.Log(float64(p.Rounds))) + p.Epsilon/math.Pow(2, float64(z+1))
}

// Noise calibrations: how σ is computed from (ε^z, δ) and the sensitivity.
const (
	// CalibrationClassic is the paper's σ² = 2 k² ln(1.25/δ)/(ε^z)² (Eqs. 10
	// and 11; Dwork and Roth 2014, Theorem A.1), which gives (ε^z, δ)-DP only
	// for ε^z < 1.
	CalibrationClassic = "classic"
	// CalibrationAnalytic is the analytic Gaussian mechanism (Balle and Wang
	// 2018, Theorem 8): the smallest σ that gives (ε^z, δ)-DP, for any ε^z.
	CalibrationAnalytic = "analytic"
)

// Calibration is how the noise of communication round z is calibrated. The
// paper's classic σ (Eqs. 10 and 11) is what the paper's analysis and
// experiments use, and it is kept wherever its theorem holds, ε^z < 1, so
// that sessions there add the paper's noise. The theorem does not hold for
// ε^z ≥ 1 — at ε^z = 8, δ = 0.01 the classic σ is 5 % short of (ε^z, δ)-DP,
// and the shortfall grows with ε — so from ε^z = 1 on σ is the analytic
// Gaussian mechanism's, which is (ε^z, δ)-DP for every ε^z. (Refusing
// ε^z ≥ 1 instead would refuse ε ≥ 3.5 at T = 100,000, which the paper's
// EXP2 runs.) Up to ε^z ≈ 6.8 (δ = 0.01) the analytic σ is also the smaller
// one, so a round there adds less noise than the classic formula would for
// the same guarantee. At ε^z = 1 σ jumps down, from the classic 3.11 k to
// the analytic 1.88 k (δ = 0.01): both are (ε^z, δ)-DP, the classic one
// loosely.
func (p Params) Calibration(z int) string {
	if p.EpsilonZ(z) < 1 {
		return CalibrationClassic
	}
	return CalibrationAnalytic
}

// Sigma is the standard deviation of the Gaussian noise on a share of a
// producer with capacity k in communication round z (the sensitivity of a
// round's units or realisations of one producer is its capacity k), as
// Calibration says: σ² = 2 k² ln(1.25/δ) / (ε^z)² (Eqs. 10 and 11) for
// ε^z < 1, the analytic Gaussian mechanism's σ from ε^z = 1 on.
func (p Params) Sigma(k int, z int) float64 {
	if p.Calibration(z) == CalibrationClassic {
		return privacy.GaussianSigma(float64(k), p.EpsilonZ(z), p.Delta)
	}
	return privacy.AnalyticGaussianSigma(float64(k), p.EpsilonZ(z), p.Delta)
}
