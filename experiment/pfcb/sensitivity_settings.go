package pfcb

import "github.com/bandit-node/bandit-node/protocol/pfcb"

// Setting is one reading of a choice the P-FCB paper leaves open: the
// overrides it makes to the defaults of protocol/pfcb and of the simulated
// instances, for the algorithms it concerns.
type Setting struct {
	// Name identifies the setting (--settings, the CSV).
	Name string
	// Choice is the open choice it varies.
	Choice string
	// Params and Simulation override the session spec's params and
	// simulation tables.
	Params, Simulation map[string]any
	// Agents overrides n (0: 10, the paper's EXP1).
	Agents int
}

// pfcbRelevant reports whether a param changes an algorithm's sessions: a
// setting drops the others, so an algorithm it does not concern reuses the
// baseline's runs instead of repeating them.
func pfcbRelevant(alg, key string) bool {
	switch key {
	case "epsilon", "delta":
		return alg == pfcb.AlgPFCB
	case "omega1", "omega2", "t_lo", "t_hi":
		return alg != pfcb.AlgNonFederated
	case "fcb_pool", "fcb_every_round", "federated_ucb":
		return alg == pfcb.AlgFCB
	case "solo_explore":
		return alg == pfcb.AlgNonFederated
	}
	return true
}

// pfcbRelevantSim reports whether a simulation key changes a family's
// instances (the spread shapes only the normal ones).
func pfcbRelevantSim(family, key string) bool {
	return key != "spread" || family == "normal"
}

// pfcbSettings is the sweep: the defaults, then one open choice at a time,
// then the readings that move the gap most, combined. Every setting runs on
// the same instances and seeds (common random numbers), so the settings
// differ by the choice alone.
func pfcbSettings() []Setting {
	sync := map[string]any{"fcb_pool": true, "fcb_every_round": true}
	alg1 := map[string]any{"fcb_pool": true, "fcb_every_round": true, "federated_ucb": true}
	pool := map[string]any{"fcb_pool": true, "fcb_every_round": true, "solo_explore": true, "federated_ucb": true}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{k: v}
		for kk, vv := range m {
			out[kk] = vv
		}
		return out
	}
	return []Setting{
		{Name: "defaults", Choice: "today's defaults (ζ 0.3, γ 0.02, ρ 1, ω1 0.1, ω2 10, spread 0.1, k ≤ 50, n 10)"},
		{Name: "zeta=0.1", Choice: "exploration ζ (208 rounds; defaults 24)", Params: map[string]any{"zeta": 0.1}},
		{Name: "zeta=1", Choice: "exploration ζ (3 rounds)", Params: map[string]any{"zeta": 1.0}},
		{Name: "gamma=0", Choice: "oracle margin γ", Params: map[string]any{"gamma": 0.0}},
		{Name: "rho=2", Choice: "revenue factor ρ", Params: map[string]any{"rho": 2.0}},
		{Name: "rho=5", Choice: "revenue factor ρ", Params: map[string]any{"rho": 5.0}},
		{Name: "spread=0.2", Choice: "normal instances' spread", Simulation: map[string]any{"spread": 0.2}},
		{Name: "kmax=10", Choice: "capacities U{1..10}", Simulation: map[string]any{"max_capacity": int64(10)}},
		{Name: "omega2=1", Choice: "ω2 = 1 (§5.4: ω2 ∈ [0, 1])", Params: map[string]any{"omega2": 1.0}},
		{Name: "t_lo=1", Choice: "communication from round 1", Params: map[string]any{"t_lo": int64(1)}},
		{Name: "fcb_pool", Choice: "FCB = Algorithm 1's pooling (every exact share at weight 1)", Params: map[string]any{"fcb_pool": true}},
		{Name: "fcb_sync", Choice: "FCB = Algorithm 1's synchronisation: every exact share, every round, weight 1", Params: sync},
		{Name: "fcb_alg1", Choice: "FCB = Algorithm 1: fcb_sync + its UCB radius (P-FCB, Non-federated unchanged)", Params: alg1},
		{Name: "fcb_alg1+zeta=0.5", Choice: "FCB = Algorithm 1, ζ 0.5 (9 rounds)", Params: with(alg1, "zeta", 0.5)},
		{Name: "fcb_alg1+zeta=1", Choice: "FCB = Algorithm 1, ζ 1", Params: with(alg1, "zeta", 1.0)},
		{Name: "solo_explore", Choice: "Non-federated explores as one agent, 3 ln T/(2ζ²)", Params: map[string]any{"solo_explore": true}},
		{Name: "federated_ucb", Choice: "FCB with Algorithm 1's UCB radius √(3 ln(nt)/(2nW))", Params: map[string]any{"federated_ucb": true}},
		{Name: "alg1", Choice: "Algorithm 1 reading: fcb_sync + federated_ucb + solo_explore", Params: pool},
		{Name: "alg1+zeta=1", Choice: "Algorithm 1 reading, ζ 1", Params: with(pool, "zeta", 1.0)},
		{Name: "alg1+omega2=1", Choice: "Algorithm 1 reading, ω2 1", Params: with(pool, "omega2", 1.0)},
	}
}
