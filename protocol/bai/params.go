package bai

import (
	"fmt"
	"math"
)

// Algorithms selectable with params.algorithm.
const (
	AlgDPMASE      = "dp_mase"
	AlgCorrupted   = "corrupted_elimination"
	AlgCentral     = "central"
	AlgIndependent = "independent"
)

// Params are the public parameters of a BAI session.
type Params struct {
	// Algorithm is dp_mase, corrupted_elimination, central or independent.
	Algorithm string `toml:"algorithm"`
	// Delta is the global failure probability δ.
	Delta float64 `toml:"delta"`
	// Eta is Corrupted Elimination's apparent privacy level η.
	Eta float64 `toml:"eta"`
	// Xi is Corrupted Elimination's corruption probability ξ (0: Féraud et al.).
	Xi float64 `toml:"xi"`
	// Epsilon is DP-MASE's ε for communications.
	Epsilon float64 `toml:"epsilon"`
	// Beta is DP-MASE's local failure probability β.
	Beta float64 `toml:"beta"`
	// Arms is the number of arms K. Required in a real session; a simulation
	// takes it from simulation.arms.
	Arms int `toml:"arms"`
	// Budget bounds the global steps (interactions) of a simulation; 0: none.
	// When it runs out the session says so instead of answering.
	Budget int64 `toml:"budget"`
	// RewardMin and RewardMax are the public range of rewards. Agents map
	// every reward onto [0, 1] with it (clamping), so that the algorithms'
	// radii and DP-MASE's sensitivity 1/R(e) hold as in the paper, whose
	// rewards lie in [0, 1] (Definition 3.1). Default [0, 1].
	RewardMin float64 `toml:"reward_min"`
	RewardMax float64 `toml:"reward_max"`
}

// DefaultParams are the paper's settings: δ = 0.05, η = 0.9, ξ = 0.05,
// ε = 0.1, β = 0.5, with Corrupted Elimination.
func DefaultParams() Params {
	return Params{Algorithm: AlgCorrupted, Delta: 0.05, Eta: 0.9, Xi: 0.05, Epsilon: 0.1, Beta: 0.5, RewardMin: 0, RewardMax: 1}
}

// PolicyFigures are the public figures, computed from the parameters,
// that an organization's policy may bound as it bounds a parameter:
//
//   - reward_range: the width R = reward_max − reward_min of the session's
//     reward range ([policy.bai.min] reward_range = 0.5 declines a range
//     narrower than that, into which most of this organization's rewards
//     would be clamped).
//   - epsilon: DP-MASE's ε, the privacy of each agent's rewards; +Inf for
//     central, whose agents send their raw rewards to the coordinator, so
//     that [policy.bai.max] epsilon refuses it. (Corrupted Elimination
//     protects the best arm, not the rewards: bound it with
//     [policy.bai.min] eta.)
func (p Params) PolicyFigures() map[string]float64 {
	eps := p.Epsilon
	if p.Algorithm == AlgCentral {
		eps = math.Inf(1)
	}
	return map[string]float64{"reward_range": p.RewardMax - p.RewardMin, "epsilon": eps}
}

// PolicyFigureDoc describes a figure of PolicyFigures for a decline reason.
func (p Params) PolicyFigureDoc(key string) string {
	switch key {
	case "reward_range":
		return "the width of the session's reward range, reward_max − reward_min"
	case "epsilon":
		if p.Algorithm == AlgCentral {
			return "central: the agents send their raw rewards, which no ε protects"
		}
		return "DP-MASE's ε for each agent's rewards"
	}
	return ""
}

// MaxArms bounds K.
const MaxArms = 1024

func (p Params) validate() error {
	open01 := func(key string, v float64) error {
		if !(v > 0 && v < 1) {
			return fmt.Errorf("params.%s: %v is not in (0, 1)", key, v)
		}
		return nil
	}
	switch p.Algorithm {
	case AlgDPMASE:
		if !(p.Epsilon > 0) || math.IsInf(p.Epsilon, 0) {
			return fmt.Errorf("params.epsilon: %v must be positive", p.Epsilon)
		}
		if err := open01("beta", p.Beta); err != nil {
			return err
		}
	case AlgCorrupted:
		if err := open01("eta", p.Eta); err != nil {
			return err
		}
		if !(p.Xi >= 0 && p.Xi < 1) {
			return fmt.Errorf("params.xi: %v is not in [0, 1)", p.Xi)
		}
	case AlgCentral, AlgIndependent:
	default:
		return fmt.Errorf("params.algorithm: %q is not one of %s, %s, %s, %s", p.Algorithm, AlgDPMASE, AlgCorrupted, AlgCentral, AlgIndependent)
	}
	if err := open01("delta", p.Delta); err != nil {
		return err
	}
	if p.Arms != 0 && (p.Arms < 2 || p.Arms > MaxArms) {
		return fmt.Errorf("params.arms: %d is out of range [2, %d]", p.Arms, MaxArms)
	}
	if !(p.RewardMax > p.RewardMin) || math.IsInf(p.RewardMax-p.RewardMin, 0) {
		return fmt.Errorf("params.reward_min, reward_max: [%v, %v] is not a finite range", p.RewardMin, p.RewardMax)
	}
	if p.Budget < 0 {
		return fmt.Errorf("params.budget: %d must not be negative", p.Budget)
	}
	return nil
}

// checkReal checks what a real session needs and a simulation does not: an
// algorithm that communicates, and the number of arms in the spec (a
// simulation takes it from simulation.arms; in a real session each agent
// has its own copy of the arms and only the spec can tell the coordinator).
func (p Params) checkReal() error {
	if p.Algorithm == AlgIndependent {
		return fmt.Errorf("params.algorithm: independent is a simulation baseline: with no communication nobody could tell the session its answer")
	}
	if p.Arms == 0 {
		return fmt.Errorf("params.arms: a real session must give the number of arms (2 to %d); only a simulation takes it from simulation.arms", MaxArms)
	}
	return nil
}

// checkAgents checks that n agents facing k arms can eliminate arms at all:
// Corrupted Elimination's local subroutine must be able to fail (η_ξ > 0,
// else it never eliminates), and the voting threshold M must be below n, as
// an arm falls globally only after more than M votes, one per agent at most.
func (p Params) checkAgents(k, n int) error {
	if !p.voting() {
		return nil
	}
	if err := p.checkEtaXi(k); err != nil {
		return err
	}
	if m := p.Threshold(k); m >= n {
		return fmt.Errorf("roles.agent: an arm falls globally after more than M = %d votes, one per agent at most, so %d agents can never eliminate one; use more than %d agents", m, n, m)
	}
	return nil
}

// voting reports whether the algorithm's agents vote against arms, and tell
// the coordinator when they stop: DP-MASE and Corrupted Elimination.
func (p Params) voting() bool {
	return p.Algorithm == AlgDPMASE || p.Algorithm == AlgCorrupted
}

// checkEtaXi checks that Corrupted Elimination's local subroutine can fail
// with k arms (η_ξ > 0); otherwise it never eliminates an arm.
func (p Params) checkEtaXi(k int) error {
	if p.Algorithm == AlgCorrupted && EtaXi(p.Eta, p.Xi, k) <= 0 {
		return fmt.Errorf("params.xi: with η = %v and %d arms, ξ = %v leaves the local subroutine no failure probability (η_ξ = 0), so it could never eliminate an arm; lower ξ", p.Eta, k, p.Xi)
	}
	return nil
}

// EtaXi is Corrupted Elimination's local failure probability
// η_ξ = max(0, 1 − (1−η)/(1−ξ)^{K−1}) (Proposition 5.1): with it, an
// observer of one agent's corrupted votes infers its best arm with
// probability at most 1 − η, the apparent privacy level.
func EtaXi(eta, xi float64, k int) float64 {
	return math.Max(0, 1-(1-eta)/math.Pow(1-xi, float64(k-1)))
}

// Threshold is the voting threshold M: an arm is eliminated globally once it
// has more than M votes against it.
//
//   - DP-MASE: M = ⌈log δ / log β⌉ (Proposition 4.2).
//   - Corrupted Elimination: M = ⌈log δ / log η_ξ⌉. The paper writes M with
//     the apparent η in Algorithm 3 and with η_ξ in §5.3 and Appendix C.3. We
//     use η_ξ: the accuracy argument (Proposition 5.2) needs only the local
//     failure probability of each independent elimination of the best arm,
//     which is η_ξ, so η_ξ^M ≤ δ suffices; and the behaviour the paper reports
//     and explains — sample complexity falling as ξ grows at a fixed apparent
//     η, the "threshold effect" — exists only if M falls with η_ξ. With ξ = 0
//     the two agree (η_ξ = η), which is Féraud et al.'s algorithm.
//   - CENTRAL and INDEPENDENT vote not at all: M is 0.
//
// When η_ξ is 0 (the local rule never fails), one vote suffices: M = 0.
func (p Params) Threshold(k int) int {
	switch p.Algorithm {
	case AlgDPMASE:
		return ceilLogRatio(p.Delta, p.Beta)
	case AlgCorrupted:
		ex := EtaXi(p.Eta, p.Xi, k)
		if ex <= 0 {
			return 0
		}
		return ceilLogRatio(p.Delta, ex)
	}
	return 0
}

func ceilLogRatio(delta, base float64) int {
	return int(math.Ceil(math.Log(delta)/math.Log(base) - 1e-12))
}

// Prop52Bound is Proposition 5.2's bound on Corrupted Elimination's failure
// probability, corrected. As printed it is min over α ∈ ℕ of
// (1 − I_ξ(α+1, M)) · δ · η_ξ^α; its infimum is 0 (the first factor is at most
// 1 and δη_ξ^α → 0), because its proof bounds the probability of one scenario
// — M+α local eliminations of the best arm — where a failure can come from any
// number of them. Summing over the scenarios, under the proof's own premise
// that M+α eliminations happen with probability at most η_ξ^{M+α}, gives
//
//	P(fail) ≤ Σ_{α≥0} η_ξ^{M+α} · (T_α − T_{α−1}),  T_α = P(Bin(M+α, 1−ξ) ≥ M), T_{−1} = 0,
//
// which we report. With ξ = 0 it is η^M ≤ δ, Féraud et al.'s bound.
func Prop52Bound(etaXi, xi float64, m int) float64 {
	sum, prev := 0.0, 0.0
	for alpha := 0; alpha <= 5000; alpha++ {
		w := math.Pow(etaXi, float64(m+alpha))
		t := binomTail(m+alpha, 1-xi, m)
		sum += w * (t - prev)
		prev = t
		if w < 1e-18 || prev >= 1 {
			break
		}
	}
	return sum
}

// FailureBound bounds the probability that the best arm is eliminated
// globally: each of the n agents eliminates it locally with probability at
// most localFail, independently of the others, and its vote then survives
// corruption with probability 1−ξ; the arm falls once more than m votes are
// cast against it, so P(fail) ≤ P(Bin(n, localFail·(1−ξ)) > m).
func FailureBound(n int, localFail, xi float64, m int) float64 {
	return binomTail(n, localFail*(1-xi), m+1)
}

// binomTail returns P(X ≥ m) for X ~ Binomial(n, p).
func binomTail(n int, p float64, m int) float64 {
	if m <= 0 {
		return 1
	}
	if p >= 1 {
		if m <= n {
			return 1
		}
		return 0
	}
	sum := 0.0
	lp, lq := math.Log(p), math.Log1p(-p)
	for k := m; k <= n; k++ {
		lg := lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1)
		sum += math.Exp(lg + float64(k)*lp + float64(n-k)*lq)
	}
	return math.Min(1, sum)
}

func lgamma(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}
