// Package pfcb is P-FCB, differentially private federated combinatorial
// bandits with quality constraints (Solanki, Kanaparthi, Damle, Gujar, ECML
// PKDD 2022). n agents, all peers, each buy units from m producers to
// maximise revenue under a quality constraint; producer i's quality q_i is
// the same for every agent, its cost c_ij and capacity k_ij are agent j's
// private data. Agents learn the qualities with UCB estimates fed to the
// Greedy SSA oracle and, in a few communication rounds, publish on the
// session topic the units and realisations accumulated since their previous
// communication — with Gaussian noise in P-FCB (Algorithm 2), exact in the
// FCB baseline; the non_federated baseline never communicates.
//
// Roles: agent ×n (n ≥ 2). What each learns: an agent, its own procurements
// and realisations, and the other agents' published (w̃, ỹ) per producer and
// communication round. What an agent publishes is (ε^z, δ)-DP per value and
// round with respect to its procurement history (§5.5).
//
// An agent procures by asking its environment (protocol.QueryProcure, one
// per round that buys anything, step = round − 1): the answer is each
// producer's realized quality, the fraction of the round's units from it
// that were good. Its simulated environment (the default) draws them,
// Bernoulli per unit, from the true qualities of [local.pfcb.agent]; an
// exec, http or replay source answers them instead, and the agent, which
// then has no true qualities, reports its realized revenue and no regret.
// Its pace is its rate (rounds per second at most, rate × TickInterval
// rounds a tick), in the daemon and in the simulator, whose agents play
// one round a tick (SimulatedRate).
//
// The spec's keys, the choices where the paper is silent or ambiguous (the
// oracle, γ, the noise's calibration) and the experiments (EXP1–3) are in
// docs/protocols/pfcb.md.
package pfcb
