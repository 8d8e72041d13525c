package samba

import (
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Name is the family's name in specs.
const Name = "samba"

// MaxOwners bounds K.
const MaxOwners = 1000

// Family is the SAMBA protocol family, as a registry holds it: family
// erased (protocol.ErasedEnv).
type Family struct {
	protocol.ErasedEnv[family, Params, *Result]
}

// The zero Family erases family{}; spelled out, so that tools see family used.
var _ protocol.Family = Family{protocol.ErasedEnv[family, Params, *Result]{Erased: protocol.Erased[family, Params, *Result]{Typed: family{}}}}

// family is the SAMBA protocol family with its own types.
type family struct {
	wire string // the wire version its roles speak; "" is wireVersion
}

// Name is protocol.Family's Name.
func (family) Name() string { return Name }

// Info is protocol.Family's Info.
//   - Every SAMBA message is small (a batch of K envelopes of a few dozen
//     bytes, a Paillier ciphertext of 512 bytes at 2048 bits), so a daemon
//     may step them where it reads them; every role copies what it keeps of
//     a message (the controller the score envelopes, into storage of its
//     own).
//   - SAMBA's roles ignore Tick: every one of them moves only on a message.
//   - Wire 1.3.0 returns a bit a step of a batch of UCB (batch.go); 1.2.0,
//     still spoken, added batched sessions (params.batch > 1); 1.1.0, still
//     spoken, derives the envelope keys per epoch of steps (wireVersion).
//     A session of params.batch = 1 is the same on all three, message for
//     message, and a batched session of an algorithm other than UCB the
//     same on 1.2.0 and 1.3.0; a family at 1.2.0 (AtWireVersion) refuses
//     batched UCB, one at 1.1.0 every batch.
func (f family) Info() protocol.Info {
	info := protocol.Info{Roles: roles(), Separations: separations(), SmallMessages: true, MessageDriven: true}
	if f.wire != "" {
		info.WireVersions = []string{f.wire}
	} else {
		info.WireVersions = []string{wireVersion, wireV120, wireV110}
		info.AtWireVersion = f.atWireVersion
	}
	return info
}

// atWireVersion is the family speaking v, one of its wire versions
// (protocol.Info.AtWireVersion).
func (family) atWireVersion(v string) protocol.Family {
	if v == wireVersion {
		v = ""
	}
	return Family{protocol.ErasedEnv[family, Params, *Result]{Erased: protocol.Erased[family, Params, *Result]{Typed: family{wire: v}}}}
}

// CheckAssignment is protocol.Family's CheckAssignment: every assignment the roles'
// bounds and separations allow can run.
func (family) CheckAssignment(protocol.Assignment, Params, bool) error { return nil }

// NewSchedule is protocol.Simulator's NewSchedule: a SAMBA simulation advances
// on messages alone.
func (family) NewSchedule(map[string]any, Params, protocol.Assignment, io.Reader) (protocol.Schedule, error) {
	return nil, nil
}

// roles are the family's roles.
func roles() []protocol.RoleSpec {
	return []protocol.RoleSpec{
		{Name: RoleCustomer, Min: 1, Max: 1, Doc: "buys the budget, holds the Paillier key, learns the cumulative reward",
			Learns: "the cumulative reward only: one Paillier ciphertext, which it decrypts"},
		{Name: RoleController, Min: 1, Max: 1, Doc: "routes ciphertexts and permutes the scores",
			Learns: "nothing of the data: envelopes it cannot open, Paillier ciphertexts and the permutations it drew"},
		{Name: RoleComp, Min: 1, Max: 1, Doc: "compares permuted, masked scores",
			Learns: "each iteration's permuted, masked scores and the position it selects: their order, which are equal and the ratios of their differences (with probability matching, their ratios), never which data owner has which; in a batch of UCB one list, from which it draws a position a step among the tied largest scores it sees; the result's leakage states it"},
		{Name: RoleOwner, Min: 2, Max: MaxOwners, Doc: "holds one arm",
			Learns: "its own arm's rewards and pulls: the setup and one bit a step"},
	}
}

// ParseParams is protocol.Family's ParseParams. What the family's wire
// version cannot carry is refused (checkWire).
func (f family) ParseParams(raw map[string]any) (Params, error) {
	p, err := protocol.ParseParams(raw, DefaultParams(), Params.validate)
	if err != nil {
		return p, err
	}
	if err := f.checkWire(p); err != nil {
		return p, err
	}
	return p, nil
}

// ownerConfig is the [local.samba.data_owner] table.
type ownerConfig struct {
	Bernoulli *float64 `toml:"bernoulli"`
	Ratings   string   `toml:"ratings"`
	Threshold float64  `toml:"threshold"`
}

// DecodeLocal is protocol.Family's DecodeLocal.
func (family) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	if role != RoleOwner {
		return protocol.NoLocalData(Name, role, table)
	}
	if table == nil {
		return nil, fmt.Errorf("%s: a data owner needs its arm: bernoulli = μ, or ratings = FILE (and threshold), or an environment source (exec, http, replay)", protocol.LocalKey(Name, role))
	}
	if !table.Simulated() {
		// Its environment answers its pulls: no simulated arm.
		return protocol.NoLocalData(Name, role, table)
	}
	var c ownerConfig
	if err := table.Decode(&c); err != nil {
		return nil, err
	}
	switch {
	case c.Bernoulli != nil && c.Ratings == "":
		if !(*c.Bernoulli >= 0 && *c.Bernoulli <= 1) {
			return nil, fmt.Errorf("%s.bernoulli: %v is not a mean in [0, 1]", protocol.LocalKey(Name, role), *c.Bernoulli)
		}
		return Bernoulli{Mu: *c.Bernoulli}, nil
	case c.Ratings != "" && c.Bernoulli == nil:
		if c.Threshold == 0 {
			c.Threshold = 4
		}
		return RatingsFile{Path: table.Path(c.Ratings), Threshold: c.Threshold}, nil
	}
	return nil, fmt.Errorf("%s: give exactly one of bernoulli and ratings", protocol.LocalKey(Name, role))
}

// simulation is the samba part of a spec's [simulation] table.
type simulation struct {
	Arms []float64 `toml:"arms"`
}

func parseSimulation(raw map[string]any) (simulation, error) {
	var s simulation
	if err := protocol.DecodeTable("simulation", raw, &s); err != nil {
		return s, err
	}
	if len(s.Arms) < 2 || len(s.Arms) > MaxOwners {
		return s, fmt.Errorf("simulation.arms: give the means of 2 to %d arms, got %d", MaxOwners, len(s.Arms))
	}
	for i, m := range s.Arms {
		if !(m >= 0 && m <= 1) {
			return s, fmt.Errorf("simulation.arms[%d]: %v is not a mean in [0, 1]", i, m)
		}
	}
	return s, nil
}

// PrepareSimulation is protocol.Family's PrepareSimulation: one data owner per mean of
// simulation.arms, Bernoulli arms.
func (family) PrepareSimulation(raw map[string]any, roles protocol.Assignment, _ Params) (protocol.Prepared, error) {
	s, err := parseSimulation(raw)
	if err != nil {
		return protocol.Prepared{}, err
	}
	a := roles
	if len(a.Roles) == 0 {
		owners := make([]string, len(s.Arms))
		for i := range owners {
			owners[i] = fmt.Sprintf("do%d", i+1)
		}
		a = protocol.Assignment{Roles: map[string][]string{RoleCustomer: {"dc"}, RoleController: {"controller"}, RoleComp: {"comp"}, RoleOwner: owners}}
	} else if a.Count(RoleOwner) != len(s.Arms) {
		return protocol.Prepared{}, fmt.Errorf("simulation.arms: %d means for %d data owners", len(s.Arms), a.Count(RoleOwner))
	}
	locals := map[protocol.Party]any{}
	for i, mu := range s.Arms {
		locals[protocol.Party{Role: RoleOwner, Index: i}] = Bernoulli{Mu: mu}
	}
	return protocol.Prepared{Assignment: a, Local: locals}, nil
}

// checkWire refuses what f's wire version cannot carry: batches before
// 1.2.0, and a batch of an algorithm decided by the state (UCB) before
// 1.3.0, whose data owners take one bit a batch where 1.3.0 sends one a
// step (batch.go).
func (f family) checkWire(p Params) error {
	if !p.batched() {
		return nil
	}
	switch f.wire {
	case wireV110:
		return fmt.Errorf("params.batch: %d needs SAMBA wire %s, and this session runs on %s because an organization of it speaks no newer one: upgrade it, or run with params.batch = 1", p.Batch, wireV120, wireV110)
	case wireV120:
		if alg, err := AlgorithmByName(p.Algorithm); err == nil && decidedByState(alg) {
			return fmt.Errorf("params.batch: %d with params.algorithm = %s needs SAMBA wire %s (a bit a step of each batch), and this session runs on %s because an organization of it speaks no newer one: upgrade it, or run with params.batch = 1", p.Batch, alg.Name(), wireVersion, wireV120)
		}
	}
	return nil
}

// NewRole is protocol.Family's NewRole. A session that the family's wire
// version cannot carry (checkWire) cannot start.
func (f family) NewRole(cfg protocol.RoleConfig, p Params) (protocol.Role, error) {
	if err := f.checkWire(p); err != nil {
		return nil, err
	}
	switch cfg.Self.Role {
	case RoleCustomer:
		return newCustomer(cfg, p)
	case RoleController:
		return newController(cfg, p)
	case RoleComp:
		return newComp(cfg, p)
	case RoleOwner:
		return newDataOwner(cfg, p)
	}
	return nil, fmt.Errorf("samba has no role %q", cfg.Self.Role)
}

// EnvironmentShape is protocol.Environmental's EnvironmentShape: a data owner's
// answers are one reward, and it is asked at most once a step (steps 0 to
// budget−1; SAMBA's step t is the query's step t−1).
func (family) EnvironmentShape(role string, p Params, _ protocol.Assignment) (int, int64) {
	if role != RoleOwner {
		return 0, 0
	}
	return 1, p.Budget
}

// SimulatedEnvironment is protocol.Environmental's SimulatedEnvironment: a data owner's
// arm as its local data describes it (a Bernoulli mean, or a ratings file
// sampled with replacement).
func (family) SimulatedEnvironment(cfg protocol.RoleConfig, _ Params) (protocol.Environment, error) {
	if cfg.Self.Role != RoleOwner {
		return nil, nil
	}
	var arm ArmSource
	switch l := cfg.Local.(type) {
	case ArmSource:
		arm = l
	case RatingsFile:
		r, err := l.Load()
		if err != nil {
			return nil, err
		}
		arm = r
	default:
		return nil, fmt.Errorf("a data owner needs its arm: configure [local.samba.data_owner] (bernoulli mean or ratings file, or an environment source)")
	}
	s, err := stream(cfg.Rand)
	if err != nil {
		return nil, err
	}
	return &armEnvironment{arm: arm, draw: randsrc.New(s)}, nil
}

// wireVersion is the version of SAMBA's role messages (protocol.Info):
// 1.3.0 returns, in a batch of an algorithm decided by the state (UCB),
// one list of bits a step from comp and a bit a step to each data owner,
// comp breaking the ties of the batch's one list per step (batch.go),
// where 1.2.0 returned one bit a batch; every other session is 1.2.0's
// (or, with params.batch = 1, 1.1.0's), byte for byte, so the family
// still speaks wireV120 and wireV110 with daemons not yet upgraded.
const wireVersion = "1.3.0"

// wireV120 adds the batched rounds of params.batch > 1 (batch.go: the
// owner_scores and owner_bits kinds), with one bit a batch of UCB.
const wireV120 = "1.2.0"

// wireV110 derives the data owners' and comp's envelope keys per epoch of
// steps (keyEpoch), which a 1.0.0 daemon, with one key per session, cannot
// open; it has no batches.
const wireV110 = "1.1.0"
