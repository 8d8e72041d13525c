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
// The spec's keys, the choices where the paper is silent or ambiguous (the
// oracle, γ, the noise's calibration) and the experiments (EXP1–3) are in
// docs/protocols/pfcb.md.
package pfcb
