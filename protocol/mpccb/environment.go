package mpccb

import (
	"context"
	"fmt"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
)

var (
	_ protocol.Environmental = Family{}
	_ protocol.Asker         = (*featureParty)(nil)
	_ protocol.Asker         = (*receiver)(nil)
)

// SimulatedEnvironment is protocol.Environmental's SimulatedEnvironment: a feature party's
// features and p″'s reward rows as its local data holds them — rows in
// memory (the simulator's, FeatureLocal and RewardLocal) or the CSV file its
// config names, read now, when the session's roles start — replayed in
// order, row t answering step t. The puller and the dealer ask nothing.
func (family) SimulatedEnvironment(cfg protocol.RoleConfig, p Params) (protocol.Environment, error) {
	var env *rowsEnvironment
	switch cfg.Self.Role {
	case RoleFeature:
		P := cfg.Assignment.Count(RoleFeature)
		split := dataset.Split(p.Dimensions, P)
		if cfg.Self.Index < 0 || cfg.Self.Index >= len(split) {
			return nil, fmt.Errorf("feature party %d of %d", cfg.Self.Index, P)
		}
		c := split[cfg.Self.Index]
		env = &rowsEnvironment{kind: protocol.QueryContext, what: "the features"}
		switch l := cfg.Local.(type) {
		case *FeatureLocal:
			env.rows = l.Rows
		case *featureConfig:
			rows, err := dataset.ReadFeatures(l.Features, c[1]-c[0])
			if err != nil {
				return nil, fmt.Errorf("local.mpccb.feature_party.features: reading this feature party's features: %w", err)
			}
			env.rows, env.what = rows, "features file "+l.Features
		default:
			return nil, fmt.Errorf("a feature party needs its features: configure [local.mpccb.feature_party] (features = FILE, or an environment source), not local data of type %T", cfg.Local)
		}
	case RoleReceiver:
		env = &rowsEnvironment{kind: protocol.QueryRewards, what: "the rewards"}
		switch l := cfg.Local.(type) {
		case *RewardLocal:
			env.rows = l.Rows
		case *rewardConfig:
			rows, err := dataset.ReadRewards(l.Rewards, p.Arms)
			if err != nil {
				return nil, fmt.Errorf("local.mpccb.reward_receiver.rewards: reading the rewards: %w", err)
			}
			env.rows, env.what = rows, "rewards file "+l.Rewards
		default:
			return nil, fmt.Errorf("the reward receiver needs its rewards: configure [local.mpccb.reward_receiver] (rewards = FILE, or an environment source), not local data of type %T", cfg.Local)
		}
	default:
		return nil, nil
	}
	if int64(len(env.rows)) < p.Steps {
		return nil, fmt.Errorf("%s: %d rows; the session needs one a step, %d", env.what, len(env.rows), p.Steps)
	}
	return env, nil
}

// EnvironmentShape is protocol.Environmental's EnvironmentShape: a feature
// party's answers are its columns of a context — dataset.Split's share of
// the dimensions, which is the same for every feature party when the
// parties divide the dimensions (otherwise 0, any: the shaper is not told
// which party, and the party refuses an answer of the wrong width when it
// comes) — and p″'s one reward per arm; either is asked once a step, steps
// 0 to steps−1.
func (family) EnvironmentShape(role string, p Params, a protocol.Assignment) (int, int64) {
	switch role {
	case RoleFeature:
		P := a.Count(RoleFeature)
		if P < 1 || p.Dimensions%P != 0 {
			return 0, p.Steps
		}
		return p.Dimensions / P, p.Steps
	case RoleReceiver:
		return p.Arms, p.Steps
	}
	return 0, 0
}

// rowsEnvironment is the simulated environment of a feature party or of
// p″: its rows, row t answering the query of step t.
type rowsEnvironment struct {
	kind protocol.QueryKind
	rows [][]float64
	what string // names the rows in errors
}

// Answer implements protocol.Environment.
func (e *rowsEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	if q.Kind != e.kind {
		return protocol.Outcome{}, fmt.Errorf("%s: a %s query, but they answer %s queries", e.what, q.Kind, e.kind)
	}
	if q.Step < 0 || q.Step >= int64(len(e.rows)) {
		return protocol.Outcome{}, fmt.Errorf("%s: %d rows; step %d asked for more", e.what, len(e.rows), q.Step)
	}
	o := protocol.Outcome{ID: q.ID}
	if e.kind == protocol.QueryContext {
		o.X = e.rows[q.Step]
	} else {
		o.Rewards = e.rows[q.Step]
	}
	return o, nil
}

// Immediate implements protocol.Environment: the rows are in memory.
func (*rowsEnvironment) Immediate() bool { return true }

// Close implements protocol.Environment.
func (*rowsEnvironment) Close() error { return nil }
