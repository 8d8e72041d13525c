package pfcb

import (
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb/pfcbpb"
	"google.golang.org/protobuf/proto"
)

// Result is a P-FCB session's result.
type Result struct {
	Algorithm string `json:"algorithm"`
	Agents    int    `json:"agents"`
	Producers int    `json:"producers"`
	Rounds    int64  `json:"rounds"`
	// Regret is the paper's: per round, r_{s*} − r_{s_t} against the oracle
	// on the true qualities, or L when s_t violates the quality constraint.
	// Only an agent whose environment is simulated knows the true
	// qualities: the others (RegretUnknown) report no regret, count 0 in
	// Regrets, and the per-agent regret, the violations and the curve are
	// over the agents that know theirs.
	RegretPerAgent       float64   `json:"regret_per_agent"`
	Regrets              []float64 `json:"regret_agents"`
	TotalRegret          float64   `json:"total_regret"`
	ConstraintViolations int64     `json:"constraint_violations"`
	// RegretUnknown lists the agents whose environment is not simulated.
	RegretUnknown []string `json:"regret_unknown,omitempty"`
	// Curve is the mean cumulative regret per agent every CurveEvery rounds.
	Curve      []float64 `json:"regret_curve"`
	CurveEvery int64     `json:"regret_curve_every"`
	// Revenues are each agent's realized revenue over the session,
	// ρ × good units − cost × units summed over its rounds and producers,
	// from the realized qualities its environment answered.
	RevenuePerAgent float64   `json:"revenue_per_agent"`
	Revenues        []float64 `json:"revenue_agents"`
	// ExploreRounds is the length of the pure-exploration phase.
	ExploreRounds int64   `json:"explore_rounds"`
	Rho           float64 `json:"rho"`
	// CommunicationRounds are the rounds in which agents published.
	CommunicationRounds []int64 `json:"communication_rounds"`
	SharesLearned       int64   `json:"shares_learned"`
	SharesOffered       int64   `json:"shares_offered"`

	// Privacy: ε^z of each communication round, δ of each release, and the
	// totals by basic composition over the rounds, for each published value
	// (w̃_ij or ỹ_ij); the pair of a round together spends twice as much.
	Privacy         string    `json:"privacy"`
	EpsilonPerRound []float64 `json:"epsilon_per_round,omitempty"`
	// NoiseCalibration says, per communication round, how σ was calibrated
	// to (ε^z, δ): "classic" (the paper's Eqs. 10 and 11, for ε^z < 1) or
	// "analytic" (the analytic Gaussian mechanism, for ε^z ≥ 1); see
	// Params.Calibration.
	NoiseCalibration []string `json:"noise_calibration_per_round,omitempty"`
	Delta            float64  `json:"delta"`
	EpsilonTotal     float64  `json:"epsilon_total"`
	DeltaTotal       float64  `json:"delta_total"`
	// EpsilonTotalPair and DeltaTotalPair are the totals for a producer's
	// pair (w̃, ỹ), twice a value's (SessionSpend).
	EpsilonTotalPair float64 `json:"epsilon_total_pair"`
	DeltaTotalPair   float64 `json:"delta_total_pair"`
}

// Combine is protocol.Family's Combine.
func (family) Combine(a protocol.Assignment, p Params, reports map[protocol.Party][]byte) (*Result, error) {
	n := a.Count(RoleAgent)
	res := &Result{Algorithm: p.Algorithm, Agents: n, Rounds: p.Rounds, ExploreRounds: p.ExploreRounds(n), Rho: p.Rho,
		CommunicationRounds: p.CommRounds(), Delta: p.Delta, Regrets: make([]float64, n), Revenues: make([]float64, n)}
	if res.CommunicationRounds == nil {
		res.CommunicationRounds = []int64{}
	}
	reps := make([]pfcbpb.AgentReport, n)
	known := 0 // agents that report their regret
	for j := range n {
		party := protocol.Party{Role: RoleAgent, Index: j}
		if err := proto.Unmarshal(reports[party], &reps[j]); err != nil {
			return nil, fmt.Errorf("report of %s: %w", party, err)
		}
		if !reps[j].RegretUnknown {
			known++
		}
	}
	var curve []float64
	first := true
	for j := range n {
		party := protocol.Party{Role: RoleAgent, Index: j}
		r := &reps[j]
		if math.IsNaN(r.Regret) || math.IsInf(r.Regret, 0) || r.Violations < 0 || r.Rounds != p.Rounds {
			// The reasons name no regret or revenue: they may reach every agent.
			return nil, fmt.Errorf("report of %s: a regret that is not finite, negative violations, or %d of %d rounds", party, r.Rounds, p.Rounds)
		}
		if math.IsNaN(r.Revenue) || math.IsInf(r.Revenue, 0) {
			return nil, fmt.Errorf("report of %s: a revenue that is not finite", party)
		}
		if j == 0 {
			res.Producers = int(r.Producers)
		}
		if int(r.Producers) != res.Producers {
			return nil, fmt.Errorf("report of %s: %d producers, but agent[0] has %d", party, r.Producers, res.Producers)
		}
		res.Revenues[j] = r.Revenue
		res.RevenuePerAgent += r.Revenue / float64(n)
		res.SharesLearned += r.Learned
		res.SharesOffered += r.Offered
		if r.RegretUnknown {
			if r.Regret != 0 || r.Violations != 0 || len(r.Curve) != 0 {
				return nil, fmt.Errorf("report of %s: no regret known (its environment is not simulated), yet a regret, violations or a curve",
					party)
			}
			res.RegretUnknown = append(res.RegretUnknown, party.String())
			continue
		}
		if first {
			first = false
			curve = make([]float64, len(r.Curve))
			res.CurveEvery = r.CurveEvery
		}
		if len(r.Curve) != len(curve) {
			return nil, fmt.Errorf("report of %s: regret curve of %d points, want %d", party, len(r.Curve), len(curve))
		}
		res.Regrets[j] = r.Regret
		res.TotalRegret += r.Regret
		res.ConstraintViolations += r.Violations
		for i, v := range r.Curve {
			curve[i] += v / float64(known)
		}
	}
	if curve == nil {
		curve = []float64{}
	}
	res.Curve = curve
	if known > 0 {
		res.RegretPerAgent = res.TotalRegret / float64(known)
	}
	switch p.Algorithm {
	case AlgPFCB:
		classic, analytic := 0, 0
		for z := range res.CommunicationRounds {
			res.EpsilonPerRound = append(res.EpsilonPerRound, p.EpsilonZ(z+1))
			c := p.Calibration(z + 1)
			res.NoiseCalibration = append(res.NoiseCalibration, c)
			if c == CalibrationClassic {
				classic++
			} else {
				analytic++
			}
		}
		spend := SessionSpend(p)
		res.EpsilonTotal, res.DeltaTotal = spend.EpsilonValue, spend.DeltaValue
		res.EpsilonTotalPair, res.DeltaTotalPair = spend.EpsilonPair, spend.DeltaPair
		res.Privacy = fmt.Sprintf("each published value is (ε^z, δ)-DP in communication round z with respect to the agent's procurement history "+
			"(Gaussian mechanism, sensitivity the producer's capacity; σ calibrated by the paper's classic formula in %d rounds, where ε^z < 1, "+
			"and by the analytic Gaussian mechanism of Balle and Wang in %d, where ε^z ≥ 1); "+
			"by basic composition over %d rounds (ε, δ) = (%.4g, %.4g) per value, (%.4g, %.4g) for a producer's pair (w̃, ỹ)",
			classic, analytic, len(res.CommunicationRounds), res.EpsilonTotal, res.DeltaTotal, res.EpsilonTotalPair, res.DeltaTotalPair)
	case AlgFCB:
		res.Privacy = "none: true procurement totals are published in every communication round"
	case AlgNonFederated:
		res.Privacy = "complete: nothing is published"
	}
	return res, nil
}
