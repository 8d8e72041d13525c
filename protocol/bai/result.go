package bai

import (
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai/baipb"
	"google.golang.org/protobuf/proto"
)

// Result is a BAI session's result. Arm indices count from 0, in the order of
// the arms' means.
type Result struct {
	Algorithm string `json:"algorithm"`
	Agents    int    `json:"agents"`
	K         int    `json:"k"`
	// BestArm is the answer, or nil when the session ended without one.
	BestArm *int `json:"best_arm"`
	// NoAnswer says why there is no answer (a budget spent, every agent
	// stopped first).
	NoAnswer string `json:"no_answer,omitempty"`
	// SampleComplexity counts the global steps (interactions, all agents
	// together) until the global set held one arm; for INDEPENDENT, until the
	// first agent finished.
	SampleComplexity int64 `json:"sample_complexity"`
	// EliminationOrder lists the arms in the order they fell globally.
	EliminationOrder []uint32 `json:"elimination_order"`
	// Votes counts the votes the coordinator received.
	Votes int64 `json:"votes"`
	// ThresholdM is the voting threshold M: an arm falls with more than M votes.
	ThresholdM int `json:"threshold_m"`

	// Privacy states what the session protects and how much.
	Privacy string  `json:"privacy"`
	Delta   float64 `json:"delta"`
	// DP-MASE: the votes are Epsilon-DP with respect to the rewards.
	Epsilon float64 `json:"epsilon,omitempty"`
	Beta    float64 `json:"beta,omitempty"`
	// Corrupted Elimination: apparent privacy η, local failure η_ξ, ξ, and
	// the failure-probability bounds (see Prop52Bound, corrected from the
	// paper's print, and FailureBound).
	Eta                float64 `json:"eta,omitempty"`
	EtaXi              float64 `json:"eta_xi,omitempty"`
	Xi                 float64 `json:"xi,omitempty"`
	FailureBoundProp52 float64 `json:"failure_bound_prop52,omitempty"`
	// FailureBoundAgents bounds the failure probability given N agents,
	// each eliminating the best arm with at most the local failure
	// probability (β, or η_ξ), independently: P(Bin(N, fail·(1−ξ)) > M). The
	// local failure probabilities are worst-case bounds, far above the actual
	// rates, so this is loose, often vacuous; the papers' δ (Propositions 4.2
	// and 5.2) counts M independent agents only.
	FailureBoundAgents float64 `json:"failure_bound_n_agents,omitempty"`

	// Arms and Correct grade a simulation against the true means.
	Arms    []float64 `json:"arms,omitempty"`
	Correct *bool     `json:"correct,omitempty"`
}

// Combine is protocol.Family's Combine.
func (family) Combine(a protocol.Assignment, p Params, reports map[protocol.Party][]byte) (*Result, error) {
	var coord baipb.CoordinatorReport
	if err := proto.Unmarshal(reports[coordinatorParty], &coord); err != nil {
		return nil, fmt.Errorf("coordinator's report: %w", err)
	}
	n := a.Count(RoleAgent)
	agents := make([]*baipb.AgentReport, n)
	k := p.Arms
	for i := range n {
		party := protocol.Party{Role: RoleAgent, Index: i}
		raw, ok := reports[party]
		if !ok {
			return nil, fmt.Errorf("no report from %s", party)
		}
		var r baipb.AgentReport
		if err := proto.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("report of %s: %w", party, err)
		}
		if r.Interactions < 0 {
			return nil, fmt.Errorf("report of %s: negative interactions", party)
		}
		agents[i] = &r
	}
	res := &Result{Algorithm: p.Algorithm, Agents: n, Votes: coord.Votes, EliminationOrder: coord.Eliminated, Delta: p.Delta}
	if res.EliminationOrder == nil {
		res.EliminationOrder = []uint32{}
	}
	if k == 0 {
		// A simulation takes K from simulation.arms, which only the
		// coordinator's role saw.
		k = int(coord.Arms)
	}
	if k < 2 || k > MaxArms {
		return nil, fmt.Errorf("coordinator's report: %d arms", k)
	}
	res.K = k
	// Arm indices from the reports name one of the K arms, or the result
	// would state an answer that is no arm.
	if coord.Decided && int(coord.Best) >= k {
		return nil, fmt.Errorf("coordinator's report: best arm %d of %d", coord.Best, k)
	}
	for _, arm := range coord.Eliminated {
		if int(arm) >= k {
			return nil, fmt.Errorf("coordinator's report: eliminated arm %d of %d", arm, k)
		}
	}
	for i, r := range agents {
		if r.Stopped && int(r.LocalBest) >= k {
			return nil, fmt.Errorf("report of %s: best arm %d of %d", protocol.Party{Role: RoleAgent, Index: i}, r.LocalBest, k)
		}
	}
	res.ThresholdM = p.Threshold(k)
	switch p.Algorithm {
	case AlgIndependent:
		// No agent hears of another: the system knows its answer once every
		// agent has identified its best arm; the answer is their majority and
		// the sample complexity the global step at which the last finished.
		count := map[uint32]int{}
		finished := true
		for _, r := range agents {
			if !r.Stopped {
				finished = false
				continue
			}
			count[r.LocalBest]++
			// In a simulation each global step advances the clock by one tick.
			steps := (r.FinishedUnixNano - coord.StartedUnixNano) / int64(protocol.TickInterval)
			res.SampleComplexity = max(res.SampleComplexity, steps)
		}
		if !finished || len(count) == 0 {
			res.NoAnswer = "not every agent finished"
			break
		}
		best, votes := 0, -1
		for arm, c := range count {
			if c > votes || (c == votes && int(arm) < best) {
				best, votes = int(arm), c
			}
		}
		res.BestArm = &best
	default:
		for _, r := range agents {
			res.SampleComplexity += r.Interactions
		}
		if coord.Decided {
			best := int(coord.Best)
			res.BestArm = &best
		} else {
			res.NoAnswer = coord.Halted
			if res.NoAnswer == "" {
				res.NoAnswer = "the coordinator did not decide"
			}
		}
	}
	switch p.Algorithm {
	case AlgDPMASE:
		res.Privacy = fmt.Sprintf("each agent's votes are %v-differentially private with respect to the rewards (Proposition 4.1)", p.Epsilon)
		res.Epsilon, res.Beta = p.Epsilon, p.Beta
		res.FailureBoundAgents = FailureBound(n, p.Beta, 0, res.ThresholdM)
	case AlgCorrupted:
		ex := EtaXi(p.Eta, p.Xi, k)
		res.Privacy = fmt.Sprintf("(ε, η)-privacy with apparent η = %v: an observer of one agent's votes infers its best arm with probability at most %.3g (Proposition 5.1)", p.Eta, 1-p.Eta)
		res.Eta, res.EtaXi, res.Xi = p.Eta, ex, p.Xi
		res.FailureBoundProp52 = Prop52Bound(ex, p.Xi, res.ThresholdM)
		res.FailureBoundAgents = FailureBound(n, ex, p.Xi, res.ThresholdM)
	case AlgCentral:
		res.Privacy = "none: every raw reward is shared with the coordinator"
	case AlgIndependent:
		res.Privacy = "complete: nothing is sent"
	}
	return res, nil
}

// Grade is protocol.Simulator's Grade: the true means, and whether the
// answer is a best arm — neither when an agent's own environment answered
// (protocol.Grading.OwnEnvironments): the simulated means are not its.
func (family) Grade(g protocol.Grading, _ Params, res *Result) (any, error) {
	s, err := parseSimulation(g.Raw)
	if err != nil {
		return nil, err
	}
	if len(g.OwnEnvironments) > 0 {
		return res, nil
	}
	res.Arms = s.Arms
	if res.BestArm != nil {
		top := math.Inf(-1)
		for _, m := range s.Arms {
			top = math.Max(top, m)
		}
		c := *res.BestArm < len(s.Arms) && s.Arms[*res.BestArm] == top
		res.Correct = &c
	}
	return res, nil
}
