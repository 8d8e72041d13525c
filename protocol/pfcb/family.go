package pfcb

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bandit-node/bandit-node/protocol"
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

// Family is the P-FCB protocol family.
type Family struct{}

var _ protocol.Family = Family{}

// Name implements protocol.Family.
func (Family) Name() string { return Name }

// Roles implements protocol.Family.
func (Family) Roles() []protocol.RoleSpec {
	return []protocol.RoleSpec{{Name: RoleAgent, Min: 2, Max: MaxAgents,
		Doc: "buys from producers under a quality constraint and shares noisy procurement totals"}}
}

// ParseParams implements protocol.Family.
func (Family) ParseParams(raw map[string]any) (any, error) {
	return protocol.ParseParams(raw, DefaultParams(), Params.validate)
}

// AgentLocal is an agent's private data: its producers and its pace.
type AgentLocal struct {
	// Qualities are the producers' true qualities, from which the agent's
	// simulated environment draws realisations (and scores its regret).
	Qualities []float64 `toml:"qualities"`
	// Costs and Capacities are the agent's own c_ij and k_ij.
	Costs      []float64 `toml:"costs"`
	Capacities []int     `toml:"capacities"`
	// Rate is how many rounds per second the agent plays in a real session.
	Rate float64 `toml:"rate"`
}

// DefaultRate is an agent's rounds per second when its config names none.
const DefaultRate = 1000

func (l *AgentLocal) validate(where string) error {
	m := len(l.Costs)
	if m < 1 || m > MaxProducers {
		return fmt.Errorf("%s.costs: give 1 to %d producers' costs, got %d", where, MaxProducers, m)
	}
	if len(l.Capacities) != m || len(l.Qualities) != m {
		return fmt.Errorf("%s: %d costs, %d capacities and %d qualities; give one of each per producer", where, m, len(l.Capacities), len(l.Qualities))
	}
	for i := range m {
		if q := l.Qualities[i]; !(q >= 0 && q <= 1) {
			return fmt.Errorf("%s.qualities[%d]: %v is not in [0, 1]", where, i, q)
		}
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

// DecodeLocal implements protocol.Family.
func (Family) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	if role != RoleAgent {
		return nil, fmt.Errorf("pfcb has no role %q", role)
	}
	if table == nil {
		return nil, fmt.Errorf("%s: an agent needs its producers: qualities, costs, capacities", protocol.LocalKey(Name, role))
	}
	var l AgentLocal
	if err := table.Decode(&l); err != nil {
		return nil, err
	}
	if err := l.validate(protocol.LocalKey(Name, role)); err != nil {
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
		draw = func() float64 { return math.Min(1, math.Max(0, center+0.1*r.NormFloat64())) }
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
			in.Capacities[j][i] = 1 + r.IntN(50)
		}
	}
	return in, nil
}

// PrepareSimulation implements protocol.Family: simulation.agents agents and
// simulation.producers producers of an instance drawn from
// simulation.instance_seed (default 1; the run's seed drives the
// realisations and the noise), "normal" instances centred on
// simulation.center (default 0.4, the paper's α).
func (f Family) PrepareSimulation(raw map[string]any, roles protocol.Assignment) (protocol.Assignment, map[protocol.Party]any, error) {
	var s simulation
	if err := protocol.DecodeTable("simulation", raw, &s); err != nil {
		return protocol.Assignment{}, nil, err
	}
	a := roles
	if len(a.Roles) == 0 {
		if s.Agents < 2 || s.Agents > MaxAgents {
			return protocol.Assignment{}, nil, fmt.Errorf("simulation.agents: %d is out of range [2, %d]", s.Agents, MaxAgents)
		}
		names := make([]string, s.Agents)
		for i := range names {
			names[i] = fmt.Sprintf("agent%d", i+1)
		}
		a = protocol.Assignment{Roles: map[string][]string{RoleAgent: names}}
	} else if s.Agents != 0 && s.Agents != a.Count(RoleAgent) {
		return protocol.Assignment{}, nil, fmt.Errorf("simulation.agents: %d disagrees with the %d names of roles.agent", s.Agents, a.Count(RoleAgent))
	}
	if s.Producers < 1 || s.Producers > MaxProducers {
		return protocol.Assignment{}, nil, fmt.Errorf("simulation.producers: %d is out of range [1, %d]", s.Producers, MaxProducers)
	}
	seed := int64(1)
	if s.InstanceSeed != nil {
		seed = *s.InstanceSeed
	}
	center := DefaultParams().Alpha
	if s.Center != nil {
		center = *s.Center
	}
	in, err := NewInstance(s.Instance, a.Count(RoleAgent), s.Producers, center, seed)
	if err != nil {
		return protocol.Assignment{}, nil, err
	}
	locals := map[protocol.Party]any{}
	for j := range a.Count(RoleAgent) {
		locals[protocol.Party{Role: RoleAgent, Index: j}] = &AgentLocal{Qualities: in.Qualities, Costs: in.Costs[j], Capacities: in.Capacities[j]}
	}
	return a, locals, nil
}

// NewRole implements protocol.Family.
func (Family) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	p, ok := cfg.Params.(Params)
	if !ok {
		return nil, fmt.Errorf("pfcb: params of type %T, want pfcb.Params", cfg.Params)
	}
	if cfg.Self.Role != RoleAgent {
		return nil, fmt.Errorf("pfcb has no role %q", cfg.Self.Role)
	}
	local, _ := cfg.Local.(*AgentLocal)
	return newAgent(cfg, p, local)
}

// UsesTopic implements protocol.TopicUser: agents publish their shares on the
// session topic.
func (Family) UsesTopic() bool { return true }
