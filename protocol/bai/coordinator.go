package bai

import (
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai/baipb"
	"google.golang.org/protobuf/proto"
)

// coordinatorParty is the one coordinator of a session.
var coordinatorParty = protocol.Party{Role: RoleCoordinator, Index: 0}

// coordinator is the central coordinator's state machine: it counts the votes
// against each arm and eliminates an arm globally once it has more than M
// votes (Algorithm 1, lines 10–14), announcing every elimination on the
// session topic; in the CENTRAL baseline it runs Successive Elimination on the
// raw rewards the agents ship.
type coordinator struct {
	protocol.Outbox // what Ready hands the driver

	cfg protocol.RoleConfig
	p   Params
	k   int
	m   int
	n   int // agents

	votes      []int
	voted      []uint64 // bit a·k + arm: agent a has voted against arm
	out        []bool
	stopped    []bool // agents that have left N(t)
	nStopped   int
	order      []uint32
	remaining  int
	totalVotes int64

	sums   []float64 // CENTRAL
	counts []int64   // CENTRAL

	started  int64
	final    []byte // the final announcement, once decided
	ticks    int
	repeats  int
	finished bool
}

func newCoordinator(cfg protocol.RoleConfig, p Params, local *CoordinatorLocal) (*coordinator, error) {
	k := p.Arms
	if k == 0 && local != nil {
		k = local.Arms
	}
	if k < 2 {
		return nil, fmt.Errorf("params.arms: the coordinator must know the number of arms (2 to %d)", MaxArms)
	}
	n := cfg.Assignment.Count(RoleAgent)
	c := &coordinator{cfg: cfg, p: p, k: k, m: p.Threshold(k), n: n, votes: make([]int, k), out: make([]bool, k),
		stopped: make([]bool, n), remaining: k, sums: make([]float64, k), counts: make([]int64, k),
		voted: make([]uint64, (n*k+63)/64)}
	// Family.CheckAssignment has refused such a session before anybody
	// accepted it; a coordinator is never built for one all the same.
	if err := p.checkAgents(k, n); err != nil {
		return nil, err
	}
	return c, nil
}

// Start implements protocol.Role. INDEPENDENT has nothing to coordinate: the
// coordinator finishes at once, noting when the session began.
func (c *coordinator) Start() error {
	c.started = c.cfg.Clock.Now().UnixNano()
	if c.p.Algorithm == AlgIndependent {
		c.finish("")
	}
	return nil
}

// Step counts a vote, or, in CENTRAL, takes an interaction's raw rewards.
func (c *coordinator) Step(m protocol.Message) error {
	if m.From.Role != RoleAgent || m.From.Index < 0 || m.From.Index >= c.n {
		return fmt.Errorf("message from %s: the coordinator hears only from agents", m.From)
	}
	if m.Topic {
		return fmt.Errorf("unexpected topic message from %s", m.From)
	}
	if c.finished || c.final != nil {
		return nil // decided: late votes change nothing
	}
	var msg baipb.Message
	if err := proto.Unmarshal(m.Body, &msg); err != nil {
		return fmt.Errorf("decoding a message from %s: %w", m.From, err)
	}
	switch b := msg.Kind.(type) {
	case *baipb.Message_Vote:
		if !c.p.voting() {
			return fmt.Errorf("%s voted in a %s session", m.From, c.p.Algorithm)
		}
		return c.stepVote(m.From, b.Vote)
	case *baipb.Message_Rewards:
		if c.p.Algorithm != AlgCentral {
			return fmt.Errorf("%s shipped raw rewards in a %s session", m.From, c.p.Algorithm)
		}
		return c.stepRewards(m.From, b.Rewards)
	case *baipb.Message_Stopped:
		if !c.p.voting() {
			return fmt.Errorf("%s sent a stop notice in a %s session", m.From, c.p.Algorithm)
		}
		return c.stepStopped(m.From)
	}
	return fmt.Errorf("%s sent a message of no kind the coordinator takes", m.From)
}

// stepVote is Algorithm 1, lines 10–14.
func (c *coordinator) stepVote(from protocol.Party, v *baipb.Vote) error {
	k := int(v.Arm)
	if k >= c.k {
		return fmt.Errorf("%s voted against arm %d of %d", from, v.Arm, c.k)
	}
	// An agent eliminates an arm from its local set once, so it votes
	// against it once at most; M counts agents (Params.Threshold). A second
	// vote would let one agent eliminate an arm alone.
	bit := from.Index*c.k + k
	if c.voted[bit/64]&(1<<(bit%64)) != 0 {
		return fmt.Errorf("%s voted against arm %d a second time", from, k)
	}
	c.voted[bit/64] |= 1 << (bit % 64)
	c.totalVotes++
	if c.out[k] {
		return nil // already eliminated: the agent had not synced yet
	}
	c.votes[k]++
	if c.votes[k] > c.m && c.remaining > 1 {
		c.eliminate([]int{k})
	}
	return nil
}

// stepStopped removes an agent from the active agents N(t). Once none is
// left while more than one arm is in the global set, no vote can come any
// more: the session ends without an answer, as the simulator's schedule ends
// when it has nobody left to activate.
func (c *coordinator) stepStopped(from protocol.Party) error {
	if c.stopped[from.Index] {
		return fmt.Errorf("%s sent a second stop notice", from)
	}
	c.stopped[from.Index] = true
	if c.nStopped++; c.nStopped == c.n {
		c.finish(EveryAgentStopped)
	}
	return nil
}

// EveryAgentStopped is why a session of a voting algorithm ends without an
// answer when every agent's local set shrank to one arm while two arms or
// more still had M votes or fewer.
const EveryAgentStopped = "every agent stopped before the global set held one arm"

// stepRewards is the CENTRAL baseline: single-agent Successive Elimination at
// confidence 1−δ on every agent's raw rewards. Arm k falls when
// max_l μ̂_l − μ̂_k ≥ 2 √(log(K n²/δ)/n), n the fewest samples of an active arm.
func (c *coordinator) stepRewards(from protocol.Party, r *baipb.Rewards) error {
	if len(r.Arms) != len(r.Rewards) || len(r.Arms) > c.k {
		return fmt.Errorf("%s sent %d arms and %d rewards", from, len(r.Arms), len(r.Rewards))
	}
	for i, arm := range r.Arms {
		if int(arm) >= c.k || math.IsNaN(r.Rewards[i]) || math.IsInf(r.Rewards[i], 0) {
			return fmt.Errorf("%s sent a reward that is not a finite number, or of an arm out of range", from)
		}
		if c.out[arm] {
			continue
		}
		c.sums[arm] += normalize(r.Rewards[i], c.p.RewardMin, c.p.RewardMax)
		c.counts[arm]++
	}
	n := int64(math.MaxInt64)
	best := math.Inf(-1)
	for k := range c.k {
		if !c.out[k] {
			n = min(n, c.counts[k])
		}
	}
	if n == 0 {
		return nil
	}
	for k := range c.k {
		if !c.out[k] {
			best = math.Max(best, c.sums[k]/float64(c.counts[k]))
		}
	}
	nf := float64(n)
	radius := 2 * math.Sqrt(math.Log(float64(c.k)*nf*nf/c.p.Delta)/nf)
	var fall []int
	for k := range c.k {
		if !c.out[k] && best-c.sums[k]/float64(c.counts[k]) >= radius {
			fall = append(fall, k)
		}
	}
	if len(fall) > 0 && len(fall) < c.remaining {
		c.eliminate(fall)
	}
	return nil
}

// eliminate removes arms from the global set and announces every arm
// eliminated so far; with one arm left, that arm is the answer.
func (c *coordinator) eliminate(arms []int) {
	for _, k := range arms {
		if !c.out[k] && c.remaining > 1 {
			c.out[k] = true
			c.order = append(c.order, uint32(k))
			c.remaining--
		}
	}
	ann := &baipb.Eliminated{Arms: append([]uint32(nil), c.order...)}
	if c.remaining == 1 {
		ann.Decided = true
		ann.Best = uint32(c.best())
	}
	body, err := proto.Marshal(&baipb.Message{Kind: &baipb.Message_Eliminated{Eliminated: ann}})
	if err != nil {
		// Our own message always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("bai: marshaling an announcement: %v", err))
	}
	c.Send(protocol.Message{Topic: true, Body: body})
	c.SetProgress(protocol.Progress{Step: int64(c.k - c.remaining), Total: int64(c.k - 1)})
	if ann.Decided {
		c.final = body
		// Not a matter of pace: whether the announcement can be lost.
		// The simulator delivers every message, so the coordinator is
		// done; over gossip it publishes the decision again (Tick).
		if c.cfg.Simulated {
			c.finish("")
		}
	}
}

// Re-announcing the decision: gossip gives no delivery guarantee, and an
// agent left with tied arms can only learn the answer from the final
// announcement, so in a real session the coordinator publishes it again
// every reannounceTicks ticks, reannouncements times, before it finishes.
const (
	reannounceTicks = 10
	reannouncements = 5
)

func (c *coordinator) best() int {
	for k, out := range c.out {
		if !out {
			return k
		}
	}
	return -1
}

func (c *coordinator) finish(halted string) {
	if c.finished {
		return
	}
	c.finished = true
	rep := &baipb.CoordinatorReport{Decided: c.remaining == 1, Eliminated: c.order, Votes: c.totalVotes,
		StartedUnixNano: c.started, Halted: halted, Arms: uint32(c.k)}
	if rep.Decided {
		rep.Best = uint32(c.best())
	}
	body, err := proto.Marshal(rep)
	if err != nil {
		// Our own report always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("bai: marshaling a report: %v", err))
	}
	c.SetResult(protocol.Result{Report: body})
}

// Halt implements protocol.Halter.
func (c *coordinator) Halt(reason string) error {
	c.finish(reason)
	return nil
}

// Tick implements protocol.Role: after a decision, the repeated final
// announcements of a real session.
func (c *coordinator) Tick() error {
	if c.final == nil || c.finished {
		return nil
	}
	if c.ticks++; c.ticks%reannounceTicks != 0 {
		return nil
	}
	c.Send(protocol.Message{Topic: true, Body: c.final})
	if c.repeats++; c.repeats >= reannouncements {
		c.finish("")
	}
	return nil
}
