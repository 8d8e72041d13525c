package pfcb

import (
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb/pfcbpb"
	"google.golang.org/protobuf/proto"
)

// maxRoundsPerTick bounds the work of one Tick in the daemon.
const maxRoundsPerTick = 20000

// curvePoints is how many points of its cumulative regret an agent reports.
const curvePoints = 100

// maxBufferedRounds bounds the communication rounds whose shares an agent
// holds: its own round z, at whose barrier it may wait, and z+1, which an
// agent that has passed that barrier may already have published. Step
// refuses a share of any other round, and a sender's second share of a
// round, so an agent holds at most maxBufferedRounds × (n−1) shares of m
// values each (2 × 255 × 2 × 1024 floats, 8 MB, at the largest session).
const maxBufferedRounds = 2

// agent is the state machine of one P-FCB agent (Algorithm 2): pure
// exploration, then UCB quality estimates fed to the Greedy SSA oracle;
// at the communication rounds it publishes the (noisy) units and
// realisations accumulated since its previous communication and waits, as at
// a barrier, for every other agent's share of that round before going on.
//
// It procures by asking its environment (protocol.Asker): a QueryProcure of
// the round's units from each producer it buys from, answered with each
// producer's realized quality — the fraction of the units bought from it
// that turned out good (the paper's Bernoulli realisation per unit, §3,
// averaged over the round's units), in [0, 1]. The agent counts
// units × quality good units (Y, y); a quality that is k/units up to
// rounding counts exactly k. A round that buys nothing asks nothing.
//
// Its regret needs the producers' true qualities, which only a simulated
// environment's local data holds (truthKnown); an agent on another source
// reports the revenue of what it procured, from the realized qualities, and
// no regret (AgentReport.regret_unknown).
type agent struct {
	protocol.Outbox // what Ready hands the driver

	cfg        protocol.RoleConfig
	p          Params
	n, self    int
	m          int
	local      *AgentLocal
	truth      []Producer // own costs and capacities, and the true qualities if truthKnown
	truthKnown bool
	noise      privacy.Noise

	explore int64
	comms   []int64 // communication rounds
	W, Y    []float64
	w, y    []float64
	est     []Producer // UCB estimates fed to the oracle
	greedy  Greedy
	l       []int
	totals  []int64 // units procured per producer

	// regret bookkeeping against the oracle on the true qualities
	bestRev  float64
	maxLoss  float64
	regret   float64
	violated int64
	curve    []float64
	every    int64
	// revenue is the realized revenue: ρ × good units − cost × units.
	revenue float64

	t        int64 // rounds begun
	z        int   // communication rounds done
	waiting  bool  // at the barrier of communication round z
	waited   int   // ticks spent waiting
	shares   map[uint32]map[int]*pfcbpb.Share
	learned  int64
	offered  int64
	acc      float64
	budget   int // rounds the agent may still begin before its next tick
	finished bool

	// The procurement asked and not yet answered: query number queries
	// (numbered from 1), of round t, to producers asked.
	asking  bool
	queries uint64
	asked   []int
	units   []float64
}

func newAgent(cfg protocol.RoleConfig, p Params, local *AgentLocal) (*agent, error) {
	if local == nil {
		return nil, fmt.Errorf("an agent needs its producers: configure [local.pfcb.agent] (qualities, costs, capacities)")
	}
	m := len(local.Costs)
	if len(local.Capacities) != m || (local.Qualities != nil && len(local.Qualities) != m) {
		return nil, fmt.Errorf("an agent needs one cost, one capacity and (with a simulated environment) one quality per producer: got %d, %d and %d",
			m, len(local.Capacities), len(local.Qualities))
	}
	if !(local.Rate > 0 && local.Rate <= 1e6) {
		return nil, fmt.Errorf("an agent's rate of %v rounds per second is out of range (0, 1e6]", local.Rate)
	}
	a := &agent{cfg: cfg, p: p, n: cfg.Assignment.Count(RoleAgent), self: cfg.Self.Index, m: m, local: local,
		W: make([]float64, m), Y: make([]float64, m), w: make([]float64, m), y: make([]float64, m),
		est: make([]Producer, m), l: make([]int, m), totals: make([]int64, m), shares: map[uint32]map[int]*pfcbpb.Share{},
		asked: make([]int, 0, m), units: make([]float64, 0, m)}
	if cfg.Simulated {
		// Not the pace: a simulation replays its noise from its seed.
		a.noise = privacy.SeededNoise{Rand: cfg.Rand}
	} else {
		a.noise = privacy.SecureNoise{}
	}
	a.truthKnown = local.Qualities != nil
	a.truth = make([]Producer, m)
	for i := range m {
		a.truth[i] = Producer{C: local.Costs[i], K: local.Capacities[i]}
		if a.truthKnown {
			a.truth[i].Q = local.Qualities[i]
		}
		a.est[i] = Producer{C: local.Costs[i], K: local.Capacities[i]}
	}
	a.explore = p.ExploreRounds(a.n)
	a.comms = p.CommRounds()
	a.every = max(1, p.Rounds/curvePoints)
	if a.truthKnown {
		best := GreedySSA(a.truth, p.Rho, p.Alpha, nil)
		a.bestRev = Revenue(a.truth, best, p.Rho)
		worst := 0.0 // the least revenue any procurement can have
		for _, pr := range a.truth {
			worst += math.Min(0, float64(pr.K)*(p.Rho*pr.Q-pr.C))
		}
		a.maxLoss = a.bestRev - worst // L = max_s (r_{s*} − r_s)
	}
	return a, nil
}

// Start implements protocol.Role.
func (a *agent) Start() error { return nil }

// Tick implements protocol.Role: the agent may begin rate × TickInterval
// rounds per tick (at most maxRoundsPerTick), in the daemon and in the
// simulator alike — the simulator's agents have SimulatedRate, one round a
// tick, in lockstep. The rate is a cap: a round ends when the environment
// has answered its procurement, and rounds not begun by the next tick
// (the environment was slower, or the agent waited at a barrier) are not
// made up.
func (a *agent) Tick() error {
	if a.finished {
		return nil
	}
	a.acc += a.local.Rate * protocol.TickInterval.Seconds()
	rounds := int(math.Min(a.acc, maxRoundsPerTick))
	a.acc -= float64(rounds)
	return a.advance(rounds)
}

// advance lets the agent begin up to k rounds before its next tick,
// stopping at a barrier, and begins them.
func (a *agent) advance(k int) error {
	a.budget = k
	if a.waiting {
		if err := a.tryBarrier(); err != nil {
			return err
		}
		if a.waiting {
			a.waited++
			if limit := int(a.p.BarrierTimeout / protocol.TickInterval.Seconds()); a.waited > limit {
				return fmt.Errorf("communication round %d: %s after %v s", a.z, a.missing(), a.p.BarrierTimeout)
			}
			return nil
		}
	}
	return a.play()
}

// play begins rounds while the budget lasts, the agent is not at a barrier
// and no procurement is unanswered.
func (a *agent) play() error {
	for a.budget > 0 && !a.waiting && !a.finished && !a.asking {
		a.budget--
		if err := a.round(); err != nil {
			return err
		}
		if a.waiting {
			a.budget = 0 // the rest of the tick is spent at the barrier
		}
	}
	return nil
}

// round begins round t = a.t+1 (lines 6–19 or 22–36 of Algorithm 2): it
// picks the procurement and asks the environment for its realisations
// (Answer goes on), or, if it buys nothing, ends the round.
func (a *agent) round() error {
	a.t++
	t := a.t
	if t <= a.explore {
		for i := range a.l {
			a.l[i] = min(1, a.truth[i].K)
		}
	} else {
		logT := math.Log(float64(t))
		for i := range a.est {
			a.est[i].Q = a.ucb(i, logT)
		}
		a.l = a.greedy.Solve(a.est, a.p.Rho, a.p.Alpha+a.p.Gamma, a.l)
	}
	a.asked, a.units = a.asked[:0], a.units[:0]
	for i, units := range a.l {
		if units > 0 {
			a.asked = append(a.asked, i)
			a.units = append(a.units, float64(units))
		}
	}
	if len(a.asked) == 0 {
		return a.endRound()
	}
	a.queries++
	a.asking = true
	// The query's steps count from 0: round t is step t−1. Its slices are
	// the agent's own (lent, protocol.Query): they change only in the next
	// round, after this query is answered.
	a.Ask(protocol.Query{ID: a.queries, Kind: protocol.QueryProcure, Step: t - 1,
		Producers: a.asked, Quantities: a.units})
	return nil
}

// goodUnitsSnap is how close, in units, units × quality must be to a whole
// number to count as exactly that many good units (a quality k/units
// written in floating point).
const goodUnitsSnap = 1e-6

// Answer implements protocol.Asker: the realized qualities of the round's
// procurement. The agent observes them, updates its totals (Eq. 9), ends
// the round and goes on with the rounds its tick allows.
func (a *agent) Answer(o protocol.Outcome) error {
	switch {
	case !a.asking:
		return fmt.Errorf("an answer to query %d, but round %d's procurement is answered already", o.ID, a.t)
	case o.ID != a.queries:
		return fmt.Errorf("round %d (step %d): an answer to query %d, but the procurement asked is query %d", a.t, a.t-1, o.ID, a.queries)
	}
	// These reasons may reach the other agents: they name no producer,
	// quantity or quality, which are the agent's private procurement
	// history and its environment's answer.
	if len(o.Qualities) != len(a.asked) {
		return fmt.Errorf("round %d (step %d): the environment answered a procurement with a number of realized qualities other than one per producer procured from",
			a.t, a.t-1)
	}
	for _, q := range o.Qualities {
		if !(q >= 0 && q <= 1) {
			return fmt.Errorf("round %d (step %d): the environment answered a realized quality that is not in [0, 1] (the fraction of a producer's units that were good)",
				a.t, a.t-1)
		}
	}
	a.asking = false
	for j, i := range a.asked {
		units := a.units[j]
		x := units * o.Qualities[j]
		if r := math.Round(x); math.Abs(x-r) <= goodUnitsSnap {
			x = r
		}
		a.W[i] += units
		a.Y[i] += x
		a.w[i] += units
		a.y[i] += x
		a.totals[i] += int64(units)
		a.revenue += a.p.Rho*x - a.truth[i].C*units
	}
	if err := a.endRound(); err != nil {
		return err
	}
	if a.waiting {
		a.budget = 0
	}
	return a.play()
}

// endRound scores round t against the oracle on the true qualities, if
// known, and communicates or finishes when the round is one to.
func (a *agent) endRound() error {
	t := a.t
	if a.truthKnown {
		if Feasible(a.truth, a.l, a.p.Alpha) {
			a.regret += a.bestRev - Revenue(a.truth, a.l, a.p.Rho)
		} else {
			a.regret += a.maxLoss
			a.violated++
		}
	}
	if t%a.every == 0 && a.truthKnown {
		a.curve = append(a.curve, a.regret)
	}
	if t%1024 == 0 || t == a.p.Rounds {
		a.SetProgress(protocol.Progress{Step: t, Total: a.p.Rounds, Activity: t})
	}
	if a.z < len(a.comms) && t == a.comms[a.z] {
		return a.communicate()
	}
	if t == a.p.Rounds {
		a.finish()
	}
	return nil
}

// ucb is the upper confidence bound of producer i's quality:
// q̂ + √(3 ln t / (2 W)), with W every unit counted so far, own and learned;
// q̂ is clamped into [0, 1] (learned noisy shares can push Y/W outside it).
// With FederatedUCB an fcb agent uses √(3 ln(nt)/(2nW)) (Algorithm 1).
func (a *agent) ucb(i int, logT float64) float64 {
	if a.W[i] <= 0 {
		return math.Inf(1)
	}
	q := math.Min(1, math.Max(0, a.Y[i]/a.W[i]))
	if a.p.FederatedUCB && a.p.Algorithm == AlgFCB {
		n := float64(a.n)
		return q + math.Sqrt(3*(math.Log(n)+logT)/(2*n*a.W[i]))
	}
	return q + math.Sqrt(3*logT/(2*a.W[i]))
}

// communicate publishes this round's share (Eqs. 10 and 11) and waits. The
// noise fails only if σ is not positive and finite, which the session's
// params (validateNoise) rule out, or if the randomness fails: the session
// ends with that reason. The params come from a peer's proposal, so this is
// an error, not a panic.
func (a *agent) communicate() error {
	a.z++
	share := &pfcbpb.Share{Comm: uint32(a.z), W: make([]float64, a.m), Y: make([]float64, a.m)}
	for i := range a.m {
		share.W[i], share.Y[i] = a.w[i], a.y[i]
		if a.p.Algorithm == AlgPFCB {
			sigma := a.p.Sigma(a.truth[i].K, a.z)
			var err error
			if share.W[i], err = a.noise.Gaussian(a.w[i], sigma); err == nil {
				share.Y[i], err = a.noise.Gaussian(a.y[i], sigma)
			}
			if err != nil {
				// The sampler's error may hold σ, which follows from the
				// producer's private capacity: it goes to this
				// organization's log, and the reason, which may reach the
				// other agents, names the round only.
				a.cfg.Logger.Error("drawing the noise of a share failed", "round", a.z, "producer", i, "err", err)
				return fmt.Errorf("communication round %d: drawing the noise of this agent's share failed (this organization's log has the detail)", a.z)
			}
		}
		a.w[i], a.y[i] = 0, 0
	}
	body, err := proto.Marshal(&pfcbpb.Message{Kind: &pfcbpb.Message_Share{Share: share}})
	if err != nil {
		// Our own message of floats and a counter always marshals: a
		// failure is a broken invariant, not peer input.
		panic(fmt.Sprintf("pfcb: marshaling a share: %v", err))
	}
	a.Send(protocol.Message{Topic: true, Body: body})
	a.waiting, a.waited = true, 0
	return a.tryBarrier()
}

// tryBarrier applies round z's shares once every other agent's is in
// (CheckandUpdate, in order of sender), and lets the agent go on.
func (a *agent) tryBarrier() error {
	got := a.shares[uint32(a.z)]
	if len(got) < a.n-1 {
		return nil
	}
	for j := range a.n {
		s, ok := got[j]
		if !ok {
			continue
		}
		for i := range a.m {
			a.offered++
			if a.checkAndUpdate(i, s.W[i], s.Y[i]) {
				a.learned++
			}
		}
	}
	delete(a.shares, uint32(a.z))
	a.waiting = false
	if a.t == a.p.Rounds {
		a.finish()
	}
	return nil
}

// checkAndUpdate is Procedure 1: learn a share if its quality ỹ/w̃ lies within
// ω1 √(3 ln(nt) / (2W)) of the local estimate Y/W, weighted by ω2. A share
// with w̃ ≤ 0 (noise can make it so) carries no usable quality and is skipped.
//
// An fcb agent with FCBPool learns every exact share at weight 1 instead.
func (a *agent) checkAndUpdate(i int, w, y float64) bool {
	if a.p.FCBPool && a.p.Algorithm == AlgFCB {
		a.W[i] += w
		a.Y[i] += y
		return w > 0
	}
	if w <= 0 || a.W[i] <= 0 {
		return false
	}
	q := a.Y[i] / a.W[i]
	r := a.p.Omega1 * math.Sqrt(3*math.Log(float64(a.n)*float64(a.t))/(2*a.W[i]))
	if v := y / w; v < q-r || v > q+r {
		return false
	}
	a.W[i] += a.p.Omega2 * w
	a.Y[i] += a.p.Omega2 * y
	return true
}

func (a *agent) missing() string {
	got := a.shares[uint32(a.z)]
	var out []string
	for j := range a.n {
		if _, ok := got[j]; !ok && j != a.self {
			out = append(out, protocol.Party{Role: RoleAgent, Index: j}.String())
		}
	}
	return fmt.Sprintf("no share from %v", out)
}

// Step takes another agent's share.
func (a *agent) Step(m protocol.Message) error {
	if m.From.Role != RoleAgent || m.From.Index < 0 || m.From.Index >= a.n || m.From.Index == a.self || !m.Topic {
		return fmt.Errorf("message from %s: agents hear only other agents, on the session topic", m.From)
	}
	var msg pfcbpb.Message
	if err := proto.Unmarshal(m.Body, &msg); err != nil {
		return fmt.Errorf("decoding a share from %s: %w", m.From, err)
	}
	s := msg.GetShare()
	if s == nil {
		return fmt.Errorf("%s sent something other than a share", m.From)
	}
	if len(s.W) != a.m || len(s.Y) != a.m {
		return fmt.Errorf("share from %s has %d and %d values for %d producers", m.From, len(s.W), len(s.Y), a.m)
	}
	for i := range a.m {
		if math.IsNaN(s.W[i]) || math.IsInf(s.W[i], 0) || math.IsNaN(s.Y[i]) || math.IsInf(s.Y[i], 0) {
			return fmt.Errorf("share from %s has a non-finite value", m.From)
		}
	}
	// Another agent is at most one communication round ahead: it waits at
	// its barrier for ours. So the agent buffers shares of maxBufferedRounds
	// rounds at most, one per sender and round.
	if int(s.Comm) < a.z || int(s.Comm) >= a.z+maxBufferedRounds || int(s.Comm) > len(a.comms) {
		return fmt.Errorf("share from %s for communication round %d, but this agent is at round %d of %d", m.From, s.Comm, a.z, len(a.comms))
	}
	if int(s.Comm) == a.z && !a.waiting {
		return fmt.Errorf("share from %s for communication round %d, which this agent has closed", m.From, s.Comm)
	}
	if a.shares[s.Comm] == nil {
		a.shares[s.Comm] = map[int]*pfcbpb.Share{}
	}
	if _, dup := a.shares[s.Comm][m.From.Index]; dup {
		return fmt.Errorf("second share from %s for communication round %d", m.From, s.Comm)
	}
	a.shares[s.Comm][m.From.Index] = s
	if a.waiting {
		return a.tryBarrier()
	}
	return nil
}

func (a *agent) finish() {
	if a.finished {
		return
	}
	a.finished = true
	rep := &pfcbpb.AgentReport{Regret: a.regret, Violations: a.violated, Rounds: a.t, Curve: a.curve, CurveEvery: a.every,
		Learned: a.learned, Offered: a.offered, Producers: int32(a.m), Revenue: a.revenue, RegretUnknown: !a.truthKnown}
	body, err := proto.Marshal(rep)
	if err != nil {
		// Our own report always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("pfcb: marshaling a report: %v", err))
	}
	a.SetProgress(protocol.Progress{Step: a.t, Total: a.p.Rounds, Activity: a.t})
	out := AgentOutcome{Violations: a.violated, Rounds: a.t, Procured: append([]int64(nil), a.totals...),
		Learned: a.learned, Offered: a.offered, Revenue: a.revenue}
	if a.truthKnown {
		r := a.regret
		out.Regret = &r
	}
	a.SetResult(protocol.Result{Report: body, Local: out})
}

// AgentOutcome is what an agent's organization keeps of a session: its
// regret (only when its environment is simulated: it needs the true
// qualities), the revenue of what it procured and its procurement totals,
// which it never shares.
type AgentOutcome struct {
	Regret     *float64 `json:"regret,omitempty"`
	Violations int64    `json:"constraint_violations"`
	Rounds     int64    `json:"rounds"`
	Procured   []int64  `json:"procured"`
	Learned    int64    `json:"shares_learned"`
	Offered    int64    `json:"shares_offered"`
	Revenue    float64  `json:"revenue"`
}
