package pfcb

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Name is the family's name in specs.
const Name = "pfcb"

// RoleAgent is the only role.
const RoleAgent = "agent"

// MaxAgents and MaxProducers bound a session.
const (
	MaxAgents    = 256
	MaxProducers = 1024
	MaxCapacity  = 1_000_000
)

// Family is the P-FCB protocol family, as a registry holds it: family
// erased (protocol.ErasedEnv).
type Family struct {
	protocol.ErasedEnv[family, Params, *Result]
}

// The zero Family erases family{}; spelled out, so that tools see family used.
var _ protocol.Family = Family{protocol.ErasedEnv[family, Params, *Result]{Erased: protocol.Erased[family, Params, *Result]{Typed: family{}}}}

// family is the P-FCB protocol family with its own types.
type family struct{}

// Name is protocol.Family's Name.
func (family) Name() string { return Name }

// Info is protocol.Family's Info: agents publish their shares on the
// session topic.
func (family) Info() protocol.Info {
	return protocol.Info{Roles: roles(), Separations: separations(), UsesTopic: true}
}

// CheckAssignment is protocol.Family's CheckAssignment: every assignment the role's
// bounds allow can run.
func (family) CheckAssignment(protocol.Assignment, Params, bool) error { return nil }

// NewSchedule is protocol.Simulator's NewSchedule: a P-FCB simulation advances
// in ticks, a round a tick, as a daemon's.
func (family) NewSchedule(map[string]any, Params, protocol.Assignment, io.Reader) (protocol.Schedule, error) {
	return nil, nil
}

// Grade is protocol.Simulator's Grade: a P-FCB result carries its own
// figures against the instance; there is nothing more to grade.
func (family) Grade(_ protocol.Grading, _ Params, res *Result) (any, error) { return res, nil }

// roles are the family's roles.
func roles() []protocol.RoleSpec {
	return []protocol.RoleSpec{{Name: RoleAgent, Min: 2, Max: MaxAgents,
		Doc:    "buys from producers under a quality constraint and shares noisy procurement totals",
		Learns: "its own procurements and realisations, and the other agents' published noisy totals (w̃, ỹ) per producer and communication round, each (ε, δ)-differentially private in the publishing agent's history"}}
}

// ParseParams is protocol.Family's ParseParams.
func (family) ParseParams(raw map[string]any) (Params, error) {
	return protocol.ParseParams(raw, DefaultParams(), Params.validate)
}

// AgentLocal is an agent's private data: its producers and its pace.
type AgentLocal struct {
	// Qualities are the producers' true qualities, from which the agent's
	// simulated environment draws realisations (and scores its regret);
	// nil when another source (exec, http, replay) answers its
	// procurements.
	Qualities []float64 `toml:"qualities"`
	// Costs and Capacities are the agent's own c_ij and k_ij: its business
	// data, whatever its environment.
	Costs      []float64 `toml:"costs"`
	Capacities []int     `toml:"capacities"`
	// Rate is how many rounds per second the agent begins at most: the
	// driver ticks it every protocol.TickInterval, and it begins
	// Rate × TickInterval rounds a tick (SimulatedRate in a simulation).
	Rate float64 `toml:"rate"`
}

// DefaultRate is an agent's rounds per second when its config names none.
const DefaultRate = 1000

// SimulatedRate is the rate of the agents of a simulation: one round a
// tick, all agents in lockstep.
const SimulatedRate = float64(time.Second / protocol.TickInterval)

// validate checks the local data of an agent whose qualities are known
// (its simulated environment's) or not (another source answers).
func (l *AgentLocal) validate(where string, simulated bool) error {
	m := len(l.Costs)
	if m < 1 || m > MaxProducers {
		return fmt.Errorf("%s.costs: give 1 to %d producers' costs, got %d", where, MaxProducers, m)
	}
	switch {
	case simulated && (len(l.Capacities) != m || len(l.Qualities) != m):
		return fmt.Errorf("%s: %d costs, %d capacities and %d qualities; give one of each per producer", where, m, len(l.Capacities), len(l.Qualities))
	case !simulated && len(l.Capacities) != m:
		return fmt.Errorf("%s: %d costs and %d capacities; give one of each per producer", where, m, len(l.Capacities))
	}
	for i := range m {
		if !simulated {
			break
		}
		if q := l.Qualities[i]; !(q >= 0 && q <= 1) {
			return fmt.Errorf("%s.qualities[%d]: %v is not in [0, 1]", where, i, q)
		}
	}
	for i := range m {
		if c := l.Costs[i]; math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return fmt.Errorf("%s.costs[%d]: %v is not a cost", where, i, c)
		}
		if k := l.Capacities[i]; k < 1 || k > MaxCapacity {
			return fmt.Errorf("%s.capacities[%d]: %d is out of range [1, %d]", where, i, k, MaxCapacity)
		}
	}
	if l.Rate == 0 {
		l.Rate = DefaultRate
	}
	if !(l.Rate > 0 && l.Rate <= 1e6) {
		return fmt.Errorf("%s.rate: %v rounds per second is out of range (0, 1e6]", where, l.Rate)
	}
	return nil
}

// DecodeLocal is protocol.Family's DecodeLocal.
func (family) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	if role != RoleAgent {
		return nil, fmt.Errorf("pfcb has no role %q", role)
	}
	key := protocol.LocalKey(Name, role)
	if table == nil {
		return nil, fmt.Errorf("%s: an agent needs its producers: qualities, costs, capacities (or, with an environment source, costs and capacities)", key)
	}
	simulated := table.Simulated()
	if _, ok := table.Raw["qualities"]; ok && !simulated {
		return nil, fmt.Errorf("%s.qualities: the agent's environment (source = %q) answers its procurements with the realized qualities; give no true qualities", key, table.Source)
	}
	var l AgentLocal
	if err := table.Decode(&l); err != nil {
		return nil, err
	}
	if err := l.validate(key, simulated); err != nil {
		return nil, err
	}
	return &l, nil
}

// simulation is the pfcb part of a spec's [simulation] table.
type simulation struct {
	Agents       int      `toml:"agents"`
	Producers    int      `toml:"producers"`
	Instance     string   `toml:"instance"`
	InstanceSeed *int64   `toml:"instance_seed"`
	Center       *float64 `toml:"center"`
	Spread       *float64 `toml:"spread"`
	MaxCapacity  *int     `toml:"max_capacity"`
}

// Instance is one problem instance: the producers' qualities, and every
// agent's costs and capacities.
type Instance struct {
	Qualities  []float64
	Costs      [][]float64 // [agent][producer]
	Capacities [][]int
}

// NewInstance draws an instance as in the paper's setup (§6.1): capacities
// k_ij ~ U{1, …, 50}; qualities and costs q_i, c_ij ~ U[0, 1] ("uniform"), or
// ~ N(center, 0.1) clipped to [0, 1] ("normal"; the paper prints N(α, 0), its
// Figure 2 N(α, 0.1)). The draw is deterministic from seed.
func NewInstance(kind string, agents, producers int, center float64, seed int64) (*Instance, error) {
	return NewInstanceOf(InstanceShape{Kind: kind, Agents: agents, Producers: producers, Center: center, Spread: 0.1, MaxCapacity: 50}, seed)
}

// InstanceShape is the family an instance is drawn from.
type InstanceShape struct {
	// Kind is "uniform" (or "") or "normal".
	Kind              string
	Agents, Producers int
	// Center and Spread are the normal instances' mean and standard
	// deviation (the paper: α and 0.1, or 0 as printed in §6.1).
	Center, Spread float64
	// MaxCapacity: capacities are drawn from U{1, …, MaxCapacity}.
	MaxCapacity int
}

// NewInstanceOf draws an instance of shape s, deterministically from seed;
// NewInstance is the paper's shape.
func NewInstanceOf(s InstanceShape, seed int64) (*Instance, error) {
	kind, agents, producers, center := s.Kind, s.Agents, s.Producers, s.Center
	if !(s.Spread >= 0) || math.IsInf(s.Spread, 0) {
		return nil, fmt.Errorf("simulation.spread: %v must be finite and at least 0", s.Spread)
	}
	if s.MaxCapacity < 1 || s.MaxCapacity > MaxCapacity {
		return nil, fmt.Errorf("simulation.max_capacity: %d is out of range [1, %d]", s.MaxCapacity, MaxCapacity)
	}
	var key [32]byte
	for i := range 8 {
		key[i] = byte(uint64(seed) >> (8 * i))
	}
	copy(key[8:], "pfcb-instance")
	r := rand.New(rand.NewChaCha8(key))
	draw := func() float64 { return r.Float64() }
	switch kind {
	case "", "uniform":
	case "normal":
		draw = func() float64 { return math.Min(1, math.Max(0, center+s.Spread*r.NormFloat64())) }
	default:
		return nil, fmt.Errorf("simulation.instance: %q is not uniform or normal", kind)
	}
	in := &Instance{Qualities: make([]float64, producers), Costs: make([][]float64, agents), Capacities: make([][]int, agents)}
	for i := range in.Qualities {
		in.Qualities[i] = draw()
	}
	for j := range agents {
		in.Costs[j] = make([]float64, producers)
		in.Capacities[j] = make([]int, producers)
		for i := range producers {
			in.Costs[j][i] = draw()
			in.Capacities[j][i] = 1 + r.IntN(s.MaxCapacity)
		}
	}
	return in, nil
}

// PrepareSimulation is protocol.Family's PrepareSimulation: simulation.agents agents and
// simulation.producers producers of an instance drawn from
// simulation.instance_seed (default 1; the run's seed drives the
// realisations and the noise), "normal" instances centred on
// simulation.center (default 0.4, the paper's α) with standard deviation
// simulation.spread (default 0.1), capacities U{1, …, simulation.max_capacity}
// (default 50).
func (f family) PrepareSimulation(raw map[string]any, roles protocol.Assignment, _ Params) (protocol.Prepared, error) {
	var s simulation
	if err := protocol.DecodeTable("simulation", raw, &s); err != nil {
		return protocol.Prepared{}, err
	}
	a := roles
	if len(a.Roles) == 0 {
		if s.Agents < 2 || s.Agents > MaxAgents {
			return protocol.Prepared{}, fmt.Errorf("simulation.agents: %d is out of range [2, %d]", s.Agents, MaxAgents)
		}
		names := make([]string, s.Agents)
		for i := range names {
			names[i] = fmt.Sprintf("agent%d", i+1)
		}
		a = protocol.Assignment{Roles: map[string][]string{RoleAgent: names}}
	} else if s.Agents != 0 && s.Agents != a.Count(RoleAgent) {
		return protocol.Prepared{}, fmt.Errorf("simulation.agents: %d disagrees with the %d names of roles.agent", s.Agents, a.Count(RoleAgent))
	}
	if s.Producers < 1 || s.Producers > MaxProducers {
		return protocol.Prepared{}, fmt.Errorf("simulation.producers: %d is out of range [1, %d]", s.Producers, MaxProducers)
	}
	seed := int64(1)
	if s.InstanceSeed != nil {
		seed = *s.InstanceSeed
	}
	center := DefaultParams().Alpha
	if s.Center != nil {
		center = *s.Center
	}
	shape := InstanceShape{Kind: s.Instance, Agents: a.Count(RoleAgent), Producers: s.Producers, Center: center, Spread: 0.1, MaxCapacity: 50}
	if s.Spread != nil {
		shape.Spread = *s.Spread
	}
	if s.MaxCapacity != nil {
		shape.MaxCapacity = *s.MaxCapacity
	}
	in, err := NewInstanceOf(shape, seed)
	if err != nil {
		return protocol.Prepared{}, err
	}
	locals := map[protocol.Party]any{}
	for j := range a.Count(RoleAgent) {
		locals[protocol.Party{Role: RoleAgent, Index: j}] = &AgentLocal{Qualities: in.Qualities, Costs: in.Costs[j], Capacities: in.Capacities[j],
			Rate: SimulatedRate}
	}
	return protocol.Prepared{Assignment: a, Local: locals}, nil
}

// NewRole is protocol.Family's NewRole.
func (family) NewRole(cfg protocol.RoleConfig, p Params) (protocol.Role, error) {
	if cfg.Self.Role != RoleAgent {
		return nil, fmt.Errorf("pfcb has no role %q", cfg.Self.Role)
	}
	local, err := protocol.LocalOf[*AgentLocal](Name, cfg)
	if err != nil {
		return nil, err
	}
	return newAgent(cfg, p, local)
}

// EnvironmentShape is protocol.Environmental's EnvironmentShape: an agent's
// answers hold one realized quality per producer (a replay file's row is a
// round, its columns the producers), and it asks at most once a round
// (steps 0 to rounds−1).
func (family) EnvironmentShape(role string, p Params, _ protocol.Assignment) (int, int64) {
	if role != RoleAgent {
		return 0, 0
	}
	// The producers are the agent's own local data, which the admission
	// check does not see here: any number of columns, checked by the agent
	// against its producers as it is answered.
	return 0, p.Rounds
}

// SimulatedEnvironment is protocol.Environmental's SimulatedEnvironment: an agent's
// producers as its local data describes them, whose units are each good
// with the producer's true quality (Bernoulli, §3), drawn from cfg.Rand.
func (family) SimulatedEnvironment(cfg protocol.RoleConfig, _ Params) (protocol.Environment, error) {
	if cfg.Self.Role != RoleAgent {
		return nil, nil
	}
	l, err := protocol.LocalOf[*AgentLocal](Name, cfg)
	if err != nil {
		return nil, err
	}
	if l == nil || l.Qualities == nil {
		return nil, fmt.Errorf("an agent's simulated environment needs its producers' true qualities: configure [local.pfcb.agent] qualities, or an environment source")
	}
	e := &producers{q: l.Qualities, logQ: make([][2]float64, len(l.Qualities)), draw: randsrc.New(cfg.Rand)}
	for i, q := range l.Qualities {
		if !(q >= 0 && q <= 1) {
			return nil, fmt.Errorf("local.pfcb.agent.qualities[%d]: a quality must be in [0, 1]", i)
		}
		e.logQ[i] = [2]float64{math.Log1p(-q), math.Log(q)}
	}
	return e, nil
}

// producers is an agent's simulated environment: each unit procured from
// producer i is good with probability q[i].
type producers struct {
	q    []float64
	logQ [][2]float64 // log(1−q_i), log(q_i)
	draw *randsrc.Source
}

// Answer implements protocol.Environment: the realized quality of each
// producer's units, the fraction of them that are good (a binomial draw
// over the units, divided by them).
func (e *producers) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	if q.Kind != protocol.QueryProcure || len(q.Producers) != len(q.Quantities) {
		return protocol.Outcome{}, fmt.Errorf("an agent's producers answer procurements, not a %s query of %d producers and %d quantities",
			q.Kind, len(q.Producers), len(q.Quantities))
	}
	o := protocol.Outcome{ID: q.ID, Qualities: make([]float64, len(q.Producers))}
	for j, i := range q.Producers {
		units := q.Quantities[j]
		if i < 0 || i >= len(e.q) {
			return protocol.Outcome{}, fmt.Errorf("a procurement from a producer outside the %d producers", len(e.q))
		}
		if !(units >= 1 && units <= MaxCapacity && units == math.Trunc(units)) {
			return protocol.Outcome{}, fmt.Errorf("a procurement of a quantity that is not a whole number in [1, %d]", MaxCapacity)
		}
		x := e.draw.BinomialCached(int(units), e.q[i], e.logQ[i][0], e.logQ[i][1])
		o.Qualities[j] = float64(x) / units
	}
	if err := e.draw.Err(); err != nil {
		return protocol.Outcome{}, err
	}
	return o, nil
}

// Immediate implements protocol.Environment.
func (*producers) Immediate() bool { return true }

// Close implements protocol.Environment.
func (*producers) Close() error { return nil }

var (
	_ protocol.Simulator     = Family{}
	_ protocol.Environmental = Family{}
	_ protocol.Asker         = (*agent)(nil)
)
