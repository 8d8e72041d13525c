package mpccb

import (
	"fmt"
	"os"
	"slices"

	"github.com/bandit-node/bandit-node/protocol"
)

// Name is the family's name in specs.
const Name = "mpccb"

// The roles.
const (
	RoleFeature  = "feature_party"
	RolePuller   = "arm_puller"
	RoleReceiver = "reward_receiver"
	RoleDealer   = "dealer"
)

// MaxParties bounds the feature parties.
const MaxParties = 16

// Family is the contextual-bandit protocol family, as a registry holds it:
// family erased (protocol.ErasedEnv). Its zero value is ready to use;
// NewFamily returns one that caches the simulator's data sets.
type Family struct {
	protocol.ErasedEnv[family, Params, *Result]
}

var _ protocol.Family = Family{}

// family is the contextual-bandit protocol family with its own types.
type family struct {
	cache *dataCache
	wire  string // the wire version its roles speak; "" is wireCurrent
}

// erase returns f as a registry holds it.
func (f family) erase() Family {
	return Family{protocol.ErasedEnv[family, Params, *Result]{Erased: protocol.Erased[family, Params, *Result]{Typed: f}}}
}

// NewFamily returns the family with a cache of loaded data sets, so that a
// simulation and its grading (and an experiment's many runs) load and
// project Fashion-MNIST once.
func NewFamily() Family { return family{cache: newDataCache()}.erase() }

// Name is protocol.Family's Name.
func (family) Name() string { return Name }

// Info is protocol.Family's Info: the roles, the separations, and the
// wire versions — 1.3.0, and 1.2.0 and 1.1.0 for daemons not yet upgraded
// (1.2.0 has no batches; learner_v110.go); a family at an older version
// (AtWireVersion) speaks only that.
func (f family) Info() protocol.Info {
	info := protocol.Info{Roles: roles(), Separations: separations()}
	if f.wire != "" {
		info.WireVersions = []string{f.wire}
	} else {
		info.WireVersions = []string{wireCurrent, wireV120, wireV110}
		info.AtWireVersion = f.atWireVersion
	}
	return info
}

// CheckAssignment is protocol.Family's CheckAssignment: every assignment the roles'
// bounds and separations allow can run.
func (family) CheckAssignment(protocol.Assignment, Params, bool) error { return nil }

// roles are the family's roles.
func roles() []protocol.RoleSpec {
	return []protocol.RoleSpec{
		{Name: RoleFeature, Min: 2, Max: MaxParties, Doc: "holds some features of every context, computes on shares",
			Learns: "its own features; of the others, uniform shares and openings under fresh uniform masks"},
		{Name: RolePuller, Min: 1, Max: 1, Doc: "p′: learns each chosen arm and pulls it",
			Learns: "every chosen arm, log(|A|/ε)-differentially private per step (the result's dp_eta)"},
		{Name: RoleReceiver, Min: 1, Max: 1, Doc: "p″: holds the rewards, shares them, learns each reward",
			Learns: "every reward (and, with its table, the arms that pay it)"},
		{Name: RoleDealer, Min: 1, Max: 1, Doc: "supplies correlated randomness; sees no data",
			Learns: "its own seeds and samples; no data"},
	}
}

// ParseParams is protocol.Family's ParseParams. Before wire 1.3.0, which
// has no batches, params.batch > 1 is refused.
func (f family) ParseParams(raw map[string]any) (Params, error) {
	p, err := protocol.ParseParams(raw, DefaultParams(), Params.validate)
	_, p.armsGiven = raw["arms"]
	_, p.dimensionsGiven = raw["dimensions"]
	if _, given := raw["window"]; !given && p.batched() {
		p.Window = DefaultBatchWindow
	}
	if err != nil {
		return p, err
	}
	return p, f.checkWire(p)
}

// checkWire refuses what f's wire version cannot carry: batches before
// 1.3.0.
func (f family) checkWire(p Params) error {
	if f.wire != "" && p.batched() {
		return fmt.Errorf("params.batch: %d needs the contextual bandit's wire %s, and this session runs on %s because an organization of it speaks no newer one: upgrade it, or run with params.batch = 1", p.Batch, wireCurrent, f.wire)
	}
	return nil
}

// FeatureLocal is a feature party's private data in memory (the
// simulator's): its columns of every context, in order, which its simulated
// environment answers step by step (SimulatedEnvironment).
type FeatureLocal struct {
	Rows [][]float64
}

// RewardLocal is the reward receiver's private data in memory (the
// simulator's): the realised reward of every arm for every context, in
// order, which its simulated environment answers step by step.
type RewardLocal struct {
	Rows [][]float64
}

// featureConfig is [local.mpccb.feature_party].
type featureConfig struct {
	Features string `toml:"features"`
}

// rewardConfig is [local.mpccb.reward_receiver].
type rewardConfig struct {
	Rewards string `toml:"rewards"`
}

// DecodeLocal is protocol.Family's DecodeLocal. A feature party's features and
// p″'s rewards are its simulated environment (SimulatedEnvironment): the
// files are read when the session's roles start, when the session's
// dimensions and arms are known, so that a file replaced between sessions
// is used as it is then; the daemon checks that they are there when it
// starts (protocol.LocalChecker). With another source (exec, http,
// replay) the environment answers the role's queries, and the files' keys
// are neither needed nor allowed.
func (family) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	switch role {
	case RoleFeature:
		if table == nil {
			return nil, fmt.Errorf("%s: a feature party needs its features: features = FILE (CSV, one context per line, this party's columns), or an environment source (exec, http, replay)", protocol.LocalKey(Name, role))
		}
		if !table.Simulated() {
			return protocol.NoLocalData(Name, role, table)
		}
		var c featureConfig
		if err := table.Decode(&c); err != nil {
			return nil, err
		}
		if c.Features == "" {
			return nil, fmt.Errorf("%s.features: name the CSV file of this party's features", protocol.LocalKey(Name, role))
		}
		c.Features = table.Path(c.Features)
		return &c, nil
	case RoleReceiver:
		if table == nil {
			return nil, fmt.Errorf("%s: the reward receiver needs its rewards: rewards = FILE (CSV, one line per context, one column per arm), or an environment source (exec, http, replay)", protocol.LocalKey(Name, role))
		}
		if !table.Simulated() {
			return protocol.NoLocalData(Name, role, table)
		}
		var c rewardConfig
		if err := table.Decode(&c); err != nil {
			return nil, err
		}
		if c.Rewards == "" {
			return nil, fmt.Errorf("%s.rewards: name the CSV file of the rewards", protocol.LocalKey(Name, role))
		}
		c.Rewards = table.Path(c.Rewards)
		return &c, nil
	}
	return protocol.NoLocalData(Name, role, table)
}

// NewRole is protocol.Family's NewRole.
func (f family) NewRole(cfg protocol.RoleConfig, p Params) (protocol.Role, error) {
	if err := f.checkWire(p); err != nil {
		return nil, err
	}
	if f.wire == wireV110 {
		p.wire = wireV110
	}
	switch cfg.Self.Role {
	case RoleFeature:
		return newFeatureParty(cfg, p)
	case RolePuller:
		return newPuller(cfg, p)
	case RoleReceiver:
		return newReceiver(cfg, p)
	case RoleDealer:
		return newDealer(cfg, p)
	}
	return nil, fmt.Errorf("mpccb has no role %q", cfg.Self.Role)
}

// sharedOrgs returns, for each organisation playing more than one role,
// what the combination lets it learn.
func sharedOrgs(a protocol.Assignment) []string {
	var notes []string
	for _, org := range a.Orgs() {
		var roles []string
		for _, p := range a.PartiesOf(org) {
			if !slices.Contains(roles, p.Role) {
				roles = append(roles, p.Role)
			}
		}
		has := func(r string) bool { return slices.Contains(roles, r) }
		name := org
		if len(name) > 16 {
			name = name[:8] + "…" + name[len(name)-6:]
		}
		switch { // the dealer plays no other role (Separations)
		case has(RoleFeature) && has(RolePuller) && has(RoleReceiver):
			notes = append(notes, fmt.Sprintf("%s holds features and learns every a_t and r_t: it sees the learner's choices on its own features", name))
		case has(RoleFeature) && has(RolePuller):
			notes = append(notes, fmt.Sprintf("%s holds features and learns every a_t: it can relate the chosen arms to its own features (a_t stays log(|A|/ε)-DP)", name))
		case has(RoleFeature) && has(RoleReceiver):
			notes = append(notes, fmt.Sprintf("%s holds features and the rewards: it learns every r_t and can relate them to its own features", name))
		case has(RolePuller) && has(RoleReceiver):
			notes = append(notes, fmt.Sprintf("%s learns every a_t and r_t", name))
		}
	}
	return notes
}

// CheckLocal implements protocol.LocalChecker: the features file is there.
func (c *featureConfig) CheckLocal() error {
	return checkDataFile("local.mpccb.feature_party.features", c.Features)
}

// CheckLocal implements protocol.LocalChecker: the rewards file is there.
func (c *rewardConfig) CheckLocal() error {
	return checkDataFile("local.mpccb.reward_receiver.rewards", c.Rewards)
}

// checkDataFile reports, naming config key key, a local data file that does
// not exist or is not a regular file.
func checkDataFile(key, path string) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// wireCurrent is the family's wire version. 1.1.0 truncates with a
// dealer-shared mask and its top bit (trunc.go in privacy/mpc), so the
// dealer's corrections and the rounds of a step differ from 1.0.0's; 1.2.0
// takes a step in 11 rounds instead of 20 at P = 2 (fused truncations, a
// shorter sign and a one-round AND in the argmax, the exploration dealt:
// learner.stepFused), so
// again the rounds, the words of each and the corrections differ. 1.3.0
// adds batches (params.batch, batch.go): with B = 1 it is 1.2.0 message
// for message; with B > 1 rounds, corrections and acknowledgements are
// numbered by batch. The messages' schema is the same.
const (
	wireCurrent = "1.3.0"
	wireV120    = "1.2.0"
)

// atWireVersion is the family speaking v, one of its wire versions
// (protocol.Info.AtWireVersion).
func (f family) atWireVersion(v string) protocol.Family {
	if v == wireCurrent {
		v = ""
	}
	return family{cache: f.cache, wire: v}.erase()
}
