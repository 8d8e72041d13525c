package pfcb

import (
	"fmt"
	"math"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb/pfcbpb"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
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
type agent struct {
	protocol.Outbox // what Ready hands the driver

	cfg     protocol.RoleConfig
	p       Params
	n, self int
	m       int
	local   *AgentLocal
	truth   []Producer // true qualities, own costs and capacities
	u       *randsrc.Source
	noise   privacy.Noise

	explore int64
	comms   []int64 // communication rounds
	W, Y    []float64
	w, y    []float64
	est     []Producer // UCB estimates fed to the oracle
	greedy  Greedy
	logQ    [][2]float64 // log(1−q_i), log(q_i) of the true qualities
	l       []int
	totals  []int64 // units procured per producer

	// regret bookkeeping against the oracle on the true qualities
	bestRev  float64
	maxLoss  float64
	regret   float64
	violated int64
	curve    []float64
	every    int64

	t        int64 // rounds done
	z        int   // communication rounds done
	waiting  bool  // at the barrier of communication round z
	waited   int   // ticks spent waiting
	shares   map[uint32]map[int]*pfcbpb.Share
	learned  int64
	offered  int64
	acc      float64
	finished bool
}

func newAgent(cfg protocol.RoleConfig, p Params, local *AgentLocal) (*agent, error) {
	if local == nil {
		return nil, fmt.Errorf("an agent needs its producers: configure [local.pfcb.agent] (qualities, costs, capacities)")
	}
	m := len(local.Costs)
	a := &agent{cfg: cfg, p: p, n: cfg.Assignment.Count(RoleAgent), self: cfg.Self.Index, m: m, local: local,
		u: randsrc.New(cfg.Rand), W: make([]float64, m), Y: make([]float64, m), w: make([]float64, m), y: make([]float64, m),
		est: make([]Producer, m), l: make([]int, m), totals: make([]int64, m), shares: map[uint32]map[int]*pfcbpb.Share{}}
	if cfg.Simulated {
		a.noise = privacy.SeededNoise{Rand: cfg.Rand}
	} else {
		a.noise = privacy.SecureNoise{}
	}
	a.truth = make([]Producer, m)
	for i := range m {
		a.truth[i] = Producer{Q: local.Qualities[i], C: local.Costs[i], K: local.Capacities[i]}
		a.est[i] = Producer{C: local.Costs[i], K: local.Capacities[i]}
	}
	a.logQ = make([][2]float64, m)
	for i, q := range local.Qualities {
		a.logQ[i] = [2]float64{math.Log1p(-q), math.Log(q)}
	}
	a.explore = p.ExploreRounds(a.n)
	a.comms = p.CommRounds()
	best := GreedySSA(a.truth, p.Rho, p.Alpha, nil)
	a.bestRev = Revenue(a.truth, best, p.Rho)
	worst := 0.0 // the least revenue any procurement can have
	for _, pr := range a.truth {
		worst += math.Min(0, float64(pr.K)*(p.Rho*pr.Q-pr.C))
	}
	a.maxLoss = a.bestRev - worst // L = max_s (r_{s*} − r_s)
	a.every = max(1, p.Rounds/curvePoints)
	return a, nil
}

// Start implements protocol.Role.
func (a *agent) Start() error { return nil }

// Tick implements protocol.Role: one round per tick in the simulator
// (lockstep), rate × TickInterval rounds per tick in the daemon.
func (a *agent) Tick() error {
	if a.finished {
		return nil
	}
	if a.cfg.Simulated {
		return a.advance(1)
	}
	a.acc += a.local.Rate * protocol.TickInterval.Seconds()
	rounds := int(math.Min(a.acc, maxRoundsPerTick))
	a.acc -= float64(rounds)
	return a.advance(rounds)
}

// advance plays up to k rounds, stopping at a barrier.
func (a *agent) advance(k int) error {
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
	for ; k > 0 && !a.waiting && !a.finished; k-- {
		if err := a.round(); err != nil {
			return err
		}
	}
	return nil
}

// round plays round t = a.t+1: lines 6–19 or 22–36 of Algorithm 2.
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
	// Procure, observe the realisations, update (Eq. 9) and score the round.
	for i, units := range a.l {
		if units == 0 {
			continue
		}
		x := a.u.BinomialCached(units, a.truth[i].Q, a.logQ[i][0], a.logQ[i][1])
		a.W[i] += float64(units)
		a.Y[i] += float64(x)
		a.w[i] += float64(units)
		a.y[i] += float64(x)
		a.totals[i] += int64(units)
	}
	if Feasible(a.truth, a.l, a.p.Alpha) {
		a.regret += a.bestRev - Revenue(a.truth, a.l, a.p.Rho)
	} else {
		a.regret += a.maxLoss
		a.violated++
	}
	if t%a.every == 0 {
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
func (a *agent) ucb(i int, logT float64) float64 {
	if a.W[i] <= 0 {
		return math.Inf(1)
	}
	q := math.Min(1, math.Max(0, a.Y[i]/a.W[i]))
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
				return fmt.Errorf("communication round %d: the noise of producer %d's share: %w", a.z, i, err)
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
func (a *agent) checkAndUpdate(i int, w, y float64) bool {
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
		Learned: a.learned, Offered: a.offered, Producers: int32(a.m)}
	body, err := proto.Marshal(rep)
	if err != nil {
		// Our own report always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("pfcb: marshaling a report: %v", err))
	}
	a.SetProgress(protocol.Progress{Step: a.t, Total: a.p.Rounds, Activity: a.t})
	a.SetResult(protocol.Result{Report: body, Local: AgentOutcome{Regret: a.regret, Violations: a.violated,
		Rounds: a.t, Procured: append([]int64(nil), a.totals...), Learned: a.learned, Offered: a.offered}})
}

// AgentOutcome is what an agent's organization keeps of a session: its
// regret and its procurement totals, which it never shares.
type AgentOutcome struct {
	Regret     float64 `json:"regret"`
	Violations int64   `json:"constraint_violations"`
	Rounds     int64   `json:"rounds"`
	Procured   []int64 `json:"procured"`
	Learned    int64   `json:"shares_learned"`
	Offered    int64   `json:"shares_offered"`
}
