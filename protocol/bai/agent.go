package bai

import (
	"fmt"
	"math"
	"slices"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai/baipb"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
	"google.golang.org/protobuf/proto"
)

// maxDeferred bounds the activations an agent keeps while it waits for its
// environment (see Activate).
const maxDeferred = 1024

// agent is the state machine of one agent: a local successive-elimination
// subroutine (DP-MASE's Algorithm 4, Corrupted Elimination's local rule of
// §B.2, or plain Successive Elimination), its votes, and its view of the
// global eliminations. It is activated once per interaction — by the
// simulator at each global step it is drawn for, by the daemon at its rate
// (protocol.Activated.Rate) — and takes its rewards from its environment
// (protocol.Asker): an interaction asks for one pull of every arm of its
// local active set and goes on when the rewards are answered.
type agent struct {
	protocol.Outbox // what Ready hands the driver

	cfg   protocol.RoleConfig
	p     Params
	k     int
	rate  float64
	u     *randsrc.Source
	noise privacy.Noise
	etaXi float64 // Corrupted Elimination's local failure probability

	active  []bool // local active set K^n
	nActive int
	global  []bool // arms announced as globally eliminated, not yet synced
	sums    []float64
	// arms is the local active set in increasing order, the arms an
	// interaction pulls; nil once it changed, until the next pull. A
	// query holds it, so it is replaced, never modified.
	arms []int

	// asked are the arms of the pull asked and not yet answered, nil if
	// none; deferred counts the activations that came meanwhile.
	asked    []int
	deferred int
	// query holds the pull asked since the last Ready, if queued (see
	// Ready).
	query  [1]protocol.Query
	queued bool

	interactions int64 // t^n
	epoch        int   // DP-MASE: e^n, from 1
	round        int64 // DP-MASE: r^n
	epochLen     int64 // DP-MASE: R(e^n)

	// clamped counts the rewards answered outside the session's reward
	// range and clamped into it (Answer). It stays in the agent's own
	// outcome: nothing sent to another organization carries it.
	clamped int64

	finished bool
}

// newAgent builds an agent. Its number of arms is params.arms, or, when
// the spec leaves it out (a simulation), the number of its simulated arms.
func newAgent(cfg protocol.RoleConfig, p Params, local *AgentLocal) (*agent, error) {
	if local == nil {
		return nil, fmt.Errorf("an agent needs its configuration: [local.bai.agent] (its arms — reward, arms, sigma — or an environment source, and rate)")
	}
	k := p.Arms
	if n := len(local.Env.Arms); n != 0 {
		if p.Arms != 0 && p.Arms != n {
			return nil, fmt.Errorf("local.bai.agent.arms: %d arms, but the session has params.arms = %d", n, p.Arms)
		}
		k = n
	}
	if k == 0 {
		return nil, fmt.Errorf("params.arms: the session must give the number of arms, since this agent's environment is not its own simulated arms")
	}
	// Family.CheckAssignment has refused such a session before anybody
	// accepted it; an agent is never built for one all the same.
	if err := p.checkEtaXi(k); err != nil {
		return nil, err
	}
	a := &agent{cfg: cfg, p: p, k: k, rate: local.Rate, u: randsrc.New(cfg.Rand),
		active: make([]bool, k), nActive: k, global: make([]bool, k), sums: make([]float64, k)}
	for i := range a.active {
		a.active[i] = true
	}
	// Not a matter of pace: a real session's noise must come from the
	// secure sampler; only a simulation replays its noise from its seed.
	if cfg.Simulated {
		a.noise = privacy.SeededNoise{Rand: cfg.Rand}
	} else {
		a.noise = privacy.SecureNoise{}
	}
	switch p.Algorithm {
	case AlgCorrupted:
		a.etaXi = EtaXi(p.Eta, p.Xi, k)
	case AlgDPMASE:
		a.epoch = 1
		a.epochLen = a.dpEpochLength()
	}
	return a, nil
}

// Start implements protocol.Role.
func (a *agent) Start() error { return nil }

// Active implements protocol.Activated: an agent stops when its local set
// holds one arm (Algorithms 2 and 3, "remove agent if done").
func (a *agent) Active() bool { return !a.finished }

// Rate implements protocol.Activated: the interactions per second of its
// [local.bai.agent] table, which the daemon activates it at.
func (a *agent) Rate() float64 { return a.rate }

// Tick implements protocol.Role: an agent does nothing as time passes; its
// driver activates it.
func (a *agent) Tick() error { return nil }

// Activate implements protocol.Activated: one interaction, in which the agent
// samples every arm of its local active set (Algorithm 1, line 6). It asks
// its environment for one pull of those arms; Answer goes on. An agent never
// has two pulls outstanding: an activation that comes while it waits for an
// answer (its environment is a program or a service, answered after a
// round trip) starts no interaction, but is kept — up to maxDeferred of them
// — and taken up as soon as the answer has come, so that a slow environment
// slows the agent to its own speed without the driver's pace being lost.
// The simulator answers at once, so there it never waits.
func (a *agent) Activate() error {
	if a.finished {
		return nil
	}
	if a.asked != nil {
		a.deferred = min(a.deferred+1, maxDeferred)
		return nil
	}
	a.pull()
	return nil
}

// pull asks the environment for one reward of every arm of the local
// active set, at step t^n (the interactions so far, from 0).
func (a *agent) pull() {
	if a.arms == nil {
		a.arms = make([]int, 0, a.nActive)
		for k, on := range a.active {
			if on {
				a.arms = append(a.arms, k)
			}
		}
	}
	a.asked = a.arms
	a.query[0] = protocol.Query{ID: uint64(a.interactions) + 1, Kind: protocol.QueryPull, Step: a.interactions, Arms: a.asked}
	a.queued = true
}

// Ready implements protocol.Role: the Outbox's batch and the pull asked
// since the last Ready, at most one. The query's storage is the agent's
// own, reused from pull to pull rather than allocated at every step: the
// agent asks again only once answered, and its driver has taken the query
// — handed it to the environment, a copy — before it answers it.
func (a *agent) Ready() protocol.Ready {
	rd := a.Outbox.Ready()
	if a.queued {
		rd.Queries, a.queued = a.query[:1:1], false
	}
	return rd
}

// Answer implements protocol.Asker: the rewards of the pull asked, one per
// arm asked, each a finite number; the interaction goes on with them. A
// reward outside the session's reward range [params.reward_min,
// params.reward_max] is clamped into it, and counted in the agent's own
// outcome (AgentOutcome.RewardsClamped): the range is the initiator's
// choice, and an abort that named the reward would hand it a real reward
// of this agent (with a range as narrow as [0, 0.001], in every session);
// after clamping every reward lies in the range, so DP-MASE's sensitivity
// 1/R(e) holds for the normalized rewards as Proposition 4.1 needs. An arm
// eliminated while the agent waited (a CENTRAL agent hears the global
// eliminations at any time) is no longer sampled: its reward is dropped.
//
// An error here may become the session's abort reason, sent to every
// participant: it names the interaction and the kind of fault, never a
// reward or an arm.
func (a *agent) Answer(o protocol.Outcome) error {
	step := a.interactions
	switch {
	case a.asked == nil:
		return fmt.Errorf("an answer to query %d, but the agent asked nothing (interaction %d)", o.ID, step)
	case o.ID != uint64(step)+1:
		return fmt.Errorf("an answer to query %d, but the query asked is %d (interaction %d)", o.ID, uint64(step)+1, step)
	case len(o.Rewards) != len(a.asked):
		return fmt.Errorf("interaction %d: the environment answered a pull with a number of rewards other than one per arm asked", step)
	}
	rewards := o.Rewards
	for i, r := range o.Rewards {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("interaction %d: the environment answered a reward that is not a finite number", step)
		}
		if c := clamp(r, a.p.RewardMin, a.p.RewardMax); c != r {
			// The answer is the environment's storage (a replayed
			// file's rows, say): clamped in a copy.
			if &rewards[0] == &o.Rewards[0] {
				rewards = slices.Clone(o.Rewards)
			}
			rewards[i] = c
			a.clamped++
		}
	}
	asked := a.asked
	a.asked = nil
	if a.finished {
		return nil // it heard the decision, or was halted, while it waited
	}
	if err := a.interact(asked, rewards); err != nil {
		return err
	}
	if a.deferred > 0 && !a.finished {
		a.deferred--
		a.pull()
	}
	return nil
}

// interact is the rest of an interaction, with the rewards of arms.
func (a *agent) interact(arms []int, rewards []float64) error {
	a.interactions++
	var shipped *baipb.Rewards
	if a.p.Algorithm == AlgCentral {
		shipped = &baipb.Rewards{Arms: make([]uint32, 0, len(arms)), Rewards: make([]float64, 0, len(arms))}
	}
	for i, k := range arms {
		if !a.active[k] {
			continue
		}
		r := rewards[i]
		if shipped != nil {
			shipped.Arms = append(shipped.Arms, uint32(k))
			shipped.Rewards = append(shipped.Rewards, r)
			continue
		}
		a.sums[k] += normalize(r, a.p.RewardMin, a.p.RewardMax)
	}
	if a.interactions%1024 == 0 {
		a.progress()
	}
	switch a.p.Algorithm {
	case AlgCentral:
		a.send(&baipb.Message{Kind: &baipb.Message_Rewards{Rewards: shipped}})
		a.sync()
	case AlgDPMASE:
		if err := a.stepDPMASE(); err != nil {
			return err
		}
	case AlgCorrupted, AlgIndependent:
		a.stepSuccessiveElimination()
	}
	return a.u.Err()
}

// stepDPMASE is lines 7–18 of Algorithm 2.
func (a *agent) stepDPMASE() error {
	a.round++
	if a.round < a.epochLen {
		return nil
	}
	out, err := a.dpLocalElimination()
	if err != nil {
		return err
	}
	for _, k := range out {
		a.eliminate(k)
		a.vote(k)
	}
	if a.nActive <= 1 {
		a.stop()
		return nil
	}
	a.epoch++
	for k := range a.sums {
		a.sums[k] = 0
	}
	a.round = 0
	a.epochLen = a.dpEpochLength()
	a.sync()
	return nil
}

// dpEpochLength is R(e) = max(32 log(8|K^n| e²/β) / 2^{−2e}, 8 log(4|K^n| e²/β) / (ε 2^{−e})),
// with |K^n| the agent's current active-set size. Epochs count from 1: with
// the paper's e^n = 0 the logarithms are of 0; Sajed & Sheffet's DP
// Successive Elimination starts at epoch 1.
func (a *agent) dpEpochLength() int64 {
	e, n := float64(a.epoch), float64(a.nActive)
	r1 := 32 * math.Log(8*n*e*e/a.p.Beta) / math.Pow(2, -2*e)
	r2 := 8 * math.Log(4*n*e*e/a.p.Beta) / (a.p.Epsilon * math.Pow(2, -e))
	r := math.Ceil(math.Max(r1, r2))
	if r > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return max(1, int64(r))
}

// dpLocalElimination is Algorithm 4 (DP-MASE local elimination): the epoch's
// fresh means get Laplace noise of scale 1/(ε R(e)) — each reward enters one
// mean of one epoch, whose sensitivity is 1/R(e) — and arm k is eliminated when
// max_l μ̃_l − μ̃_k > 2(h(e) + c(e)).
func (a *agent) dpLocalElimination() ([]int, error) {
	e, n, r := float64(a.epoch), float64(a.nActive), float64(a.epochLen)
	h := math.Sqrt(math.Log(8*n*e*e/a.p.Beta) / (2 * r))
	c := math.Log(4*n*e*e/a.p.Beta) / (a.p.Epsilon * r)
	noisy := make([]float64, a.k)
	best := math.Inf(-1)
	for k := range a.k {
		if !a.active[k] {
			continue
		}
		v, err := a.noise.Laplace(a.sums[k]/r, 1/r, a.p.Epsilon)
		if err != nil {
			// The sampler's error may describe its input, an arm's
			// private mean: the detail goes to this organization's log,
			// and the reason, which may reach everyone, names the epoch.
			a.cfg.Logger.Error("drawing DP-MASE's Laplace noise failed", "epoch", a.epoch, "arm", k, "err", err)
			return nil, fmt.Errorf("epoch %d: drawing DP-MASE's Laplace noise failed (this organization's log has the detail)", a.epoch)
		}
		noisy[k] = v
		best = math.Max(best, v)
	}
	var out []int
	for k := range a.k {
		if a.active[k] && best-noisy[k] > 2*(h+c) {
			out = append(out, k)
		}
	}
	return out, nil
}

// stepSuccessiveElimination is Corrupted Elimination's local rule (§B.2,
// Algorithm 4 of Appendix B.2) — arm k is eliminated when
// max_l μ̂_l − μ̂_k ≥ 2 √(log(K t²/η_ξ) / t), t = t^n — followed by the vote,
// sent only when its Bernoulli(1−ξ) mask is 1; or, for INDEPENDENT, plain
// Successive Elimination at confidence 1−δ with no vote at all.
func (a *agent) stepSuccessiveElimination() {
	t := float64(a.interactions)
	fail := a.etaXi
	if a.p.Algorithm == AlgIndependent {
		fail = a.p.Delta
	}
	radius := 2 * math.Sqrt(math.Log(float64(a.k)*t*t/fail)/t)
	best := math.Inf(-1)
	for k := range a.k {
		if a.active[k] {
			best = math.Max(best, a.sums[k]/t)
		}
	}
	for k := range a.k {
		if !a.active[k] || best-a.sums[k]/t < radius {
			continue
		}
		a.eliminate(k)
		if a.p.Algorithm == AlgCorrupted && a.u.Float() < 1-a.p.Xi {
			a.vote(k)
		}
	}
	if a.nActive <= 1 {
		a.stop()
		return
	}
	a.sync()
}

func (a *agent) eliminate(k int) {
	if a.active[k] {
		a.active[k] = false
		a.nActive--
		a.arms = nil
		a.progress()
	}
}

// sync removes the arms announced as globally eliminated from the local set
// (K^n := K^n ∩ K). DP-MASE syncs at the end of each epoch, the others after
// every interaction.
func (a *agent) sync() {
	for k, out := range a.global {
		if out {
			a.eliminate(k)
		}
	}
	if a.nActive <= 1 && !a.finished {
		a.stop()
	}
}

func (a *agent) vote(k int) {
	a.send(&baipb.Message{Kind: &baipb.Message_Vote{Vote: &baipb.Vote{Arm: uint32(k)}}})
}

func (a *agent) send(m *baipb.Message) {
	body, err := proto.Marshal(m)
	if err != nil {
		// Our own message always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("bai: marshaling a message: %v", err))
	}
	a.Send(protocol.Message{To: coordinatorParty, Body: body})
}

// stop finishes an agent whose local set holds one arm (or none, when the
// global eliminations took its last ones). In the voting algorithms it tells
// the coordinator, which keeps the active agents N(t) of Algorithms 1 to 3 and
// so learns when nobody is left to vote.
//
// Only INDEPENDENT's report names the agent's local best arm, which its
// answer is the majority of. In the voting algorithms the report goes to the
// session's initiator, who needs only the interactions, and the local best arm
// is what Corrupted Elimination's corrupted votes hide (Proposition 5.1); it
// stays in the agent's own outcome.
func (a *agent) stop() {
	if a.finished {
		return
	}
	if a.p.voting() {
		a.send(&baipb.Message{Kind: &baipb.Message_Stopped{Stopped: &baipb.Stopped{}}})
	}
	rep := &baipb.AgentReport{Stopped: a.nActive == 1}
	local := -1
	for k, on := range a.active {
		if on {
			local = k
		}
	}
	if rep.Stopped && a.p.Algorithm == AlgIndependent {
		rep.LocalBest = uint32(local)
	}
	a.finish(rep, local)
}

// finish ends the agent with rep, its report to the initiator, and local, its
// local best arm for its own outcome (−1 for none).
func (a *agent) finish(rep *baipb.AgentReport, local int) {
	if a.finished {
		return
	}
	a.finished = true
	rep.Interactions = a.interactions
	rep.FinishedUnixNano = a.cfg.Clock.Now().UnixNano()
	body, err := proto.Marshal(rep)
	if err != nil {
		// Our own report always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("bai: marshaling a report: %v", err))
	}
	a.progress()
	a.SetResult(protocol.Result{Report: body, Local: AgentOutcome{
		Interactions: a.interactions, Stopped: rep.Stopped, LocalBest: local, Halted: rep.Halted, RewardsClamped: a.clamped}})
}

// AgentOutcome is what an agent's organization keeps of a session.
type AgentOutcome struct {
	Interactions int64 `json:"interactions"`
	Stopped      bool  `json:"stopped"`
	// LocalBest is the one arm left in the local set, −1 when the agent
	// finished otherwise (it heard the decision, or was halted).
	LocalBest int    `json:"local_best"`
	Halted    string `json:"halted,omitempty"`
	// RewardsClamped counts the rewards the agent's environment answered
	// outside the session's reward range, which the agent clamped into it.
	// Only this organization sees it (its own result); many clamps say
	// the initiator's range does not fit this organization's rewards.
	RewardsClamped int64 `json:"rewards_clamped"`
}

// Halt implements protocol.Halter.
func (a *agent) Halt(reason string) error {
	a.finish(&baipb.AgentReport{Halted: reason}, -1)
	return nil
}

// Step handles the coordinator's announcements.
func (a *agent) Step(m protocol.Message) error {
	if m.From != coordinatorParty {
		return fmt.Errorf("message from %s: agents hear only from the coordinator", m.From)
	}
	var msg baipb.Message
	if err := proto.Unmarshal(m.Body, &msg); err != nil {
		return fmt.Errorf("decoding a message from the coordinator: %w", err)
	}
	el, ok := msg.Kind.(*baipb.Message_Eliminated)
	if !ok || !m.Topic {
		return fmt.Errorf("the coordinator sent an agent something other than an elimination announcement")
	}
	for _, arm := range el.Eliminated.Arms {
		if int(arm) >= a.k {
			return fmt.Errorf("announcement names arm %d of %d", arm, a.k)
		}
		a.global[arm] = true
	}
	if a.finished {
		return nil
	}
	if el.Eliminated.Decided {
		a.finish(&baipb.AgentReport{}, -1)
		return nil
	}
	if a.p.Algorithm == AlgCentral {
		a.sync()
	}
	return nil
}

// progress reports the arms eliminated locally, and the interactions as
// activity.
func (a *agent) progress() {
	a.SetProgress(protocol.Progress{Step: int64(a.k - a.nActive), Total: int64(a.k - 1), Activity: a.interactions})
}

var _ protocol.Activated = (*agent)(nil)
var _ protocol.Asker = (*agent)(nil)
var _ protocol.Halter = (*agent)(nil)
