package bai

import (
	"fmt"
	"io"
	"math"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Name is the family's name in specs.
const Name = "bai"

// Role names.
const (
	RoleCoordinator = "coordinator"
	RoleAgent       = "agent"
)

// MaxAgents bounds the agents of a session.
const MaxAgents = 4096

// Family is the BAI protocol family, as a registry holds it: family erased
// (protocol.ErasedEnv).
type Family struct {
	protocol.ErasedEnv[family, Params, *Result]
}

// The zero Family erases family{}; spelled out, so that tools see family used.
var (
	_ protocol.Family        = Family{protocol.ErasedEnv[family, Params, *Result]{Erased: protocol.Erased[family, Params, *Result]{Typed: family{}}}}
	_ protocol.Simulator     = Family{}
	_ protocol.Environmental = Family{}
)

// family is the best-arm identification family with its own types.
type family struct{}

// Name is protocol.Family's Name.
func (family) Name() string { return Name }

// Info is protocol.Family's Info: the coordinator announces eliminations
// on the session topic; no pair of roles is kept apart (separation.go).
func (family) Info() protocol.Info {
	return protocol.Info{Roles: roles(), Separations: separations(), UsesTopic: true}
}

// roles are the family's roles.
func roles() []protocol.RoleSpec {
	return []protocol.RoleSpec{
		{Name: RoleCoordinator, Min: 1, Max: 1, Doc: "counts votes, eliminates arms globally, announces them",
			Learns: "which agent voted against which arm and when each agent stopped (in central, every raw reward); DP-MASE's votes are ε-DP in the rewards, Corrupted Elimination's reveal an agent's best arm with probability at most 1−η"},
		{Name: RoleAgent, Min: 1, Max: MaxAgents, Doc: "interacts with its own copy of the bandit and votes against arms",
			Learns: "its own rewards and the global eliminations"},
	}
}

// ParseParams is protocol.Family's ParseParams.
func (family) ParseParams(raw map[string]any) (Params, error) {
	return protocol.ParseParams(raw, DefaultParams(), Params.validate)
}

// AgentLocal is an agent's local data: its simulated arms, and its rate.
type AgentLocal struct {
	// Env are the arms of the agent's simulated environment; empty when
	// its [local.bai.agent] table names another source (exec, http,
	// replay), which answers its pulls instead.
	Env Environment
	// Rate is how many interactions per second the agent makes in a real
	// session: its pace, which the daemon keeps (protocol.Activated.Rate), whatever
	// answers its pulls.
	Rate float64
}

// CoordinatorLocal is what the simulator tells the coordinator: the number of
// arms, when the spec's params leave it out.
type CoordinatorLocal struct {
	Arms int
}

// agentConfig is the [local.bai.agent] table.
type agentConfig struct {
	Reward string    `toml:"reward"`
	Arms   []float64 `toml:"arms"`
	Sigma  float64   `toml:"sigma"`
	Rate   float64   `toml:"rate"`
}

// DefaultRate is an agent's interactions per second when its config names none.
const DefaultRate = 100

// DecodeLocal is protocol.Family's DecodeLocal. An agent's table gives its arms
// (reward, arms, sigma) when its environment is the simulated one; with
// another source, which answers its pulls, they are neither needed nor
// allowed. Its rate, its pace, is given either way.
func (family) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	switch role {
	case RoleCoordinator:
		return protocol.NoLocalData(Name, role, table)
	case RoleAgent:
		key := protocol.LocalKey(Name, role)
		if table == nil {
			return nil, fmt.Errorf("%s: an agent needs its reward source: reward, arms (and sigma), or an environment source (exec, http, replay); and rate", key)
		}
		var c agentConfig
		if err := table.Decode(&c); err != nil {
			return nil, err
		}
		l := &AgentLocal{Rate: c.Rate}
		if table.Simulated() {
			l.Env = Environment{Reward: c.Reward, Arms: c.Arms, Sigma: c.Sigma}
			if err := l.Env.validate(key); err != nil {
				return nil, err
			}
		} else if c.Reward != "" || c.Arms != nil || c.Sigma != 0 {
			return nil, fmt.Errorf("%s: source = %q answers the agent's pulls: remove reward, arms and sigma, which describe simulated arms only", key, table.Source)
		}
		if l.Rate == 0 {
			l.Rate = DefaultRate
		}
		if !(l.Rate > 0 && l.Rate <= 1e6) {
			return nil, fmt.Errorf("%s.rate: %v interactions per second is out of range (0, 1e6]", key, c.Rate)
		}
		return l, nil
	}
	return nil, fmt.Errorf("bai has no role %q", role)
}

// SimulatedEnvironment is protocol.Environmental's SimulatedEnvironment: an agent's arms
// as its local data describes them (Bernoulli or Gaussian means), drawing
// from cfg.Rand, each reward clamped to the session's reward range. The
// coordinator asks nothing.
func (family) SimulatedEnvironment(cfg protocol.RoleConfig, p Params) (protocol.Environment, error) {
	if cfg.Self.Role != RoleAgent {
		return nil, nil
	}
	local, err := protocol.LocalOf[*AgentLocal](Name, cfg)
	if err != nil {
		return nil, err
	}
	if local == nil || len(local.Env.Arms) == 0 {
		return nil, fmt.Errorf("an agent's simulated environment needs its arms: configure [local.bai.agent] (reward, arms, sigma), or an environment source")
	}
	return &simulatedEnvironment{arms: local.Env, lo: p.RewardMin, hi: p.RewardMax, draw: randsrc.New(cfg.Rand)}, nil
}

// EnvironmentShape is protocol.Environmental's EnvironmentShape: an agent's
// answers have one column per arm (params.arms, which a real session
// gives); how many interactions it makes is not known in advance.
func (family) EnvironmentShape(role string, p Params, _ protocol.Assignment) (int, int64) {
	if role != RoleAgent {
		return 0, 0
	}
	return p.Arms, 0
}

// simulation is the bai part of a spec's [simulation] table.
type simulation struct {
	Agents            int       `toml:"agents"`
	Arms              []float64 `toml:"arms"`
	Reward            string    `toml:"reward"`
	Sigma             float64   `toml:"sigma"`
	AgentDistribution string    `toml:"agent_distribution"`
	Alpha             float64   `toml:"alpha"`
	Gamma             float64   `toml:"gamma"`
}

func parseSimulation(raw map[string]any) (simulation, error) {
	var s simulation
	if err := protocol.DecodeTable("simulation", raw, &s); err != nil {
		return s, err
	}
	env := Environment{Reward: s.Reward, Arms: s.Arms, Sigma: s.Sigma}
	if err := env.validate("simulation"); err != nil {
		return s, err
	}
	s.Reward, s.Sigma = env.Reward, env.Sigma
	switch s.AgentDistribution {
	case "", "uniform":
		s.AgentDistribution = "uniform"
		if s.Alpha != 0 || s.Gamma != 0 {
			return s, fmt.Errorf("simulation.alpha, gamma: only the power agent distribution has them")
		}
	case "power":
		if s.Gamma == 0 {
			s.Gamma = 0.8
		}
		if !(s.Alpha >= 0) || !(s.Gamma > 0) || math.IsInf(s.Alpha, 0) || math.IsInf(s.Gamma, 0) {
			return s, fmt.Errorf("simulation.alpha, gamma: want α ≥ 0 and γ > 0, got %v and %v", s.Alpha, s.Gamma)
		}
	default:
		return s, fmt.Errorf("simulation.agent_distribution: %q is not uniform or power", s.AgentDistribution)
	}
	return s, nil
}

// CheckAssignment is protocol.Family's CheckAssignment: a real session
// must name its arms and use an algorithm that communicates (checkReal), and
// its agents must be able to outvote the threshold M (checkAgents). A
// simulation that leaves params.arms out takes the number of arms from
// simulation.arms, which PrepareSimulation checks.
func (family) CheckAssignment(a protocol.Assignment, p Params, simulated bool) error {
	if !simulated {
		if err := p.checkReal(); err != nil {
			return err
		}
	}
	if p.Arms == 0 {
		return nil
	}
	return p.checkAgents(p.Arms, a.Count(RoleAgent))
}

// PrepareSimulation is protocol.Simulator's PrepareSimulation: simulation.agents
// agents, each with the arms of simulation.arms, and a coordinator. The
// simulation's arms must agree with params.arms when the spec gives both;
// when it gives only simulation.arms, the agents must be able to outvote
// the threshold M with that many arms.
func (family) PrepareSimulation(raw map[string]any, roles protocol.Assignment, p Params) (protocol.Prepared, error) {
	s, err := parseSimulation(raw)
	if err != nil {
		return protocol.Prepared{}, err
	}
	if p.Arms != 0 && p.Arms != len(s.Arms) {
		return protocol.Prepared{}, fmt.Errorf("simulation.arms: %d means, but params.arms = %d; give one mean per arm, or leave params.arms out (a simulation takes it from simulation.arms)", len(s.Arms), p.Arms)
	}
	a, locals, err := prepareSimulation(s, roles)
	if err != nil {
		return protocol.Prepared{}, err
	}
	if p.Arms == 0 {
		if err := p.checkAgents(len(s.Arms), a.Count(RoleAgent)); err != nil {
			return protocol.Prepared{}, err
		}
	}
	return protocol.Prepared{Assignment: a, Local: locals}, nil
}

// prepareSimulation is PrepareSimulation of a parsed [simulation] table.
func prepareSimulation(s simulation, roles protocol.Assignment) (protocol.Assignment, map[protocol.Party]any, error) {
	a := roles
	if len(a.Roles) == 0 {
		if s.Agents < 1 || s.Agents > MaxAgents {
			return protocol.Assignment{}, nil, fmt.Errorf("simulation.agents: %d is out of range [1, %d]", s.Agents, MaxAgents)
		}
		agents := make([]string, s.Agents)
		for i := range agents {
			agents[i] = fmt.Sprintf("agent%d", i+1)
		}
		a = protocol.Assignment{Roles: map[string][]string{RoleCoordinator: {"coordinator"}, RoleAgent: agents}}
	} else if s.Agents != 0 && s.Agents != a.Count(RoleAgent) {
		return protocol.Assignment{}, nil, fmt.Errorf("simulation.agents: %d disagrees with the %d names of roles.agent", s.Agents, a.Count(RoleAgent))
	}
	locals := map[protocol.Party]any{coordinatorParty: &CoordinatorLocal{Arms: len(s.Arms)}}
	env := Environment{Reward: s.Reward, Arms: s.Arms, Sigma: s.Sigma}
	for i := range a.Count(RoleAgent) {
		locals[protocol.Party{Role: RoleAgent, Index: i}] = &AgentLocal{Env: env}
	}
	return a, locals, nil
}

// NewSchedule is protocol.Simulator's NewSchedule: each global step activates
// one agent drawn from P_N over the agents still active — uniform, or
// P(n) ∝ (n+α)^−γ — until params.budget steps have been taken.
func (family) NewSchedule(raw map[string]any, p Params, a protocol.Assignment, rand io.Reader) (protocol.Schedule, error) {
	s, err := parseSimulation(raw)
	if err != nil {
		return nil, err
	}
	n := a.Count(RoleAgent)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
		if s.AgentDistribution == "power" {
			w[i] = math.Pow(float64(i+1)+s.Alpha, -s.Gamma)
		}
	}
	return newAgentSchedule(w, p.Budget, rand).Next, nil
}

// NewRole is protocol.Family's NewRole.
func (family) NewRole(cfg protocol.RoleConfig, p Params) (protocol.Role, error) {
	switch cfg.Self.Role {
	case RoleCoordinator:
		// Family.CheckAssignment has refused such a session before anybody
		// accepted it; a coordinator is never built for one all the same.
		if !cfg.Simulated {
			if err := p.checkReal(); err != nil {
				return nil, err
			}
		}
		local, err := protocol.LocalOf[*CoordinatorLocal](Name, cfg)
		if err != nil {
			return nil, err
		}
		return newCoordinator(cfg, p, local)
	case RoleAgent:
		local, err := protocol.LocalOf[*AgentLocal](Name, cfg)
		if err != nil {
			return nil, err
		}
		return newAgent(cfg, p, local)
	}
	return nil, fmt.Errorf("bai has no role %q", cfg.Self.Role)
}
