package samba

import (
	"fmt"
	"sort"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/proto"
)

// RoleCost is what one role (all data owners together) spent.
type RoleCost struct {
	Messages    int64   `json:"messages"`
	Bytes       int64   `json:"bytes"`
	AESOps      int64   `json:"aes_ops"`
	PaillierOps int64   `json:"paillier_ops"`
	BusySeconds float64 `json:"busy_seconds"`
}

// Result is a SAMBA session's result.
type Result struct {
	Algorithm string `json:"algorithm"`
	Budget    int64  `json:"budget"`
	K         int    `json:"k"`
	// Batch is B, the decisions one round serves (params.batch).
	Batch int `json:"batch"`
	// BatchGrowth is the schedule's growth (params.batch_growth), set
	// when batches grow.
	BatchGrowth      float64 `json:"batch_growth,omitempty"`
	CumulativeReward int64   `json:"cumulative_reward"`
	// Messages counts every message of the session; PerStep those of one
	// round (a step's iteration; a full batch's, with params.batch = B > 1):
	// 2K+2 (K scores, a list each way, K bits), 2K+2B batched (K scores
	// messages, B lists each way, K bits messages) — 2K+B+1 for batched
	// UCB, whose batch is one list of scores to comp and B lists of bits
	// back (batchShape).
	Messages int64 `json:"messages"`
	PerStep  int64 `json:"messages_per_step_iteration"`
	// Costs breaks the work down by role (the paper's Figure 8(d)).
	Costs map[string]RoleCost `json:"costs"`
	// StepsSeconds is the controller's wall time from the first score to
	// the last bits: the budget's last N − K steps (every iteration of
	// each), without the setup before them and the encrypted sum after.
	// MsPerStep is that per step. A daemon session sets them; a
	// simulation, whose clock is virtual, reports elapsed_seconds instead.
	StepsSeconds float64 `json:"steps_seconds,omitempty"`
	MsPerStep    float64 `json:"ms_per_step,omitempty"`
	// What comp learns, stated.
	Leakage string `json:"leakage"`

	// Set by a simulation only: the true means, the pulls of each arm and
	// the standard algorithm's cumulative reward from the same seed.
	Arms                      []float64 `json:"arms,omitempty"`
	Pulls                     []int64   `json:"pulls,omitempty"`
	ReferenceCumulativeReward *int64    `json:"reference_cumulative_reward,omitempty"`
	SameArmSequence           *bool     `json:"same_arm_sequence,omitempty"`
	sequence                  []int
}

// Combine is protocol.Family's Combine.
func (family) Combine(a protocol.Assignment, p Params, reports map[protocol.Party][]byte) (*Result, error) {
	alg, _ := AlgorithmByName(p.Algorithm)
	k := a.Count(RoleOwner)
	steps := max(p.Batch, 1)
	lists := steps
	if decidedByState(alg) {
		lists = 1
	}
	growth := 0.0
	if p.BatchGrowth > 1 {
		growth = p.BatchGrowth
	}
	res := &Result{Algorithm: p.Algorithm, Budget: p.Budget, K: k, Batch: max(p.Batch, 1), BatchGrowth: growth, Costs: map[string]RoleCost{}, PerStep: int64(2*k + lists + steps),
		Leakage: leakage(alg, p.Batch, p.BatchGrowth)}
	type pull struct {
		t uint64
		i int
	}
	var pulls []pull
	for _, party := range a.Parties() {
		var r sambapb.Report
		if err := proto.Unmarshal(reports[party], &r); err != nil {
			return nil, fmt.Errorf("report of %s: %w", party, err)
		}
		c := res.Costs[party.Role]
		c.Messages += r.MessagesSent
		c.Bytes += r.BytesSent
		c.AESOps += r.AesOps
		c.PaillierOps += r.PaillierOps
		c.BusySeconds += float64(r.BusyNs) / 1e9
		res.Costs[party.Role] = c
		res.Messages += r.MessagesSent
		// The steps' time is the controller's, and a diagnostic: one that
		// is negative or comes from another role is left out rather than
		// costing the data customer a valid cumulative reward.
		if r.StepsNs > 0 && party.Role == RoleController && p.Budget > int64(k) {
			res.StepsSeconds = float64(r.StepsNs) / 1e9
			res.MsPerStep = res.StepsSeconds * 1e3 / float64(p.Budget-int64(k))
		}
		if party.Role == RoleCustomer {
			if !r.HasReward {
				return nil, fmt.Errorf("the data customer reported no cumulative reward")
			}
			res.CumulativeReward = r.CumulativeReward
		}
		if party.Role == RoleOwner && len(r.Pulls) > 0 {
			if res.Pulls == nil {
				res.Pulls = make([]int64, k)
			}
			res.Pulls[party.Index] = int64(len(r.Pulls))
			for _, t := range r.Pulls {
				pulls = append(pulls, pull{t, party.Index})
			}
		}
	}
	sort.Slice(pulls, func(x, y int) bool { return pulls[x].t < pulls[y].t })
	// Sized by the pulls reported (simulations only), not by the budget: a
	// real session of 10⁸ steps reports none.
	seq := make([]int, 0, len(pulls))
	for _, pl := range pulls {
		seq = append(seq, pl.i)
	}
	res.sequence = seq
	return res, nil
}

// setTiming sets the roles' busy time (Grade): in a simulation, whose roles' clocks
// are virtual and do not time their calls, each role's busy time is the
// wall time the simulator measured inside its parties' calls.
func (r *Result) setTiming(roleSeconds map[string]float64) {
	for role, c := range r.Costs {
		c.BusySeconds = roleSeconds[role]
		r.Costs[role] = c
	}
}

// Grade is protocol.Simulator's Grade: the true means, the standard
// algorithm's cumulative reward and arm sequence from the same seed, and
// each role's busy time — only the busy time when a data owner's own
// environment answered (protocol.Grading.OwnEnvironments).
func (family) Grade(g protocol.Grading, p Params, res *Result) (any, error) {
	s, err := parseSimulation(g.Raw)
	if err != nil {
		return nil, err
	}
	if len(g.OwnEnvironments) > 0 {
		// Some data owner answered from its own program, service or file:
		// the simulated means are not its, and no reference run is.
		res.setTiming(g.RoleSeconds)
		return res, nil
	}
	res.Arms = s.Arms
	reward, seq, err := Reference(p, s.Arms, g.Seed)
	if err != nil {
		return nil, err
	}
	res.ReferenceCumulativeReward = &reward
	same := len(seq) == len(res.sequence)
	for i := 0; same && i < len(seq); i++ {
		same = seq[i] == res.sequence[i]
	}
	res.SameArmSequence = &same
	res.setTiming(g.RoleSeconds)
	return res, nil
}

// leakage states what comp learns in a session of alg in batches of batch
// steps (docs/protocols/samba.md, "What each role learns" and "Batches").
func leakage(alg Algorithm, batch int, growth float64) string {
	var argmax, matching bool
	for l := 1; l <= alg.Iterations(); l++ {
		if alg.Matching(l) {
			matching = true
		} else {
			argmax = true
		}
	}
	s := "comp sees each iteration's scores permuted and masked, never which data owner is at which position"
	if alg.Iterations() > 1 {
		s += fmt.Sprintf(" (%s runs %d iterations a step)", alg.Name(), alg.Iterations())
	}
	if argmax {
		s += "; where an iteration takes an argmax (a random increasing affine map a·v + b), their order, which of them are equal and the ratios of their differences, not their values or ratios"
	}
	if matching {
		s += "; where an iteration matches probabilities (a multiplicative mask), their ratios as well"
	}
	switch alg.Name() {
	case "epsilon_greedy", "epsilon_decreasing":
		s += "; on an explore step every data owner sends the same constant, so comp sees K equal scores and knows the step explores (the controller cannot tell)"
	case "softmax":
		s += "; softmax's ratios are exp((μ_i − μ_j)/τ) with τ public, so comp learns the differences of the data owners' empirical means"
	case "pursuit":
		s += "; Pursuit's second iteration matches probabilities that sum to 1, so comp learns them exactly, permuted"
	}
	batches := fmt.Sprintf("in batches of %d steps", batch)
	if growth > 1 {
		batches = fmt.Sprintf("in batches of %d steps and growing ×%g a batch", batch, growth)
	}
	switch {
	case (batch > 1 || growth > 1) && decidedByState(alg):
		s += fmt.Sprintf("; %s decided from the state at each batch's start, one list a batch (%s's scores of a batch are one), so comp sees one list where a batch's sequential steps would show it one a step, and draws each step's position among that list's tied largest scores itself (it sees the ties; the draws are its own)", batches, alg.Name())
	case batch > 1 || growth > 1:
		s += fmt.Sprintf("; %s, each step's list under its own permutation and mask, all of a batch's lists computed from the state at its start, t included, so comp can relate them across the batch over every arm", batches)
	}
	return s
}
