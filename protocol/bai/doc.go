// Package bai is multi-agent best-arm identification with private
// communications (Rio, Barlier, Colin, Soare, ICML 2023): N agents, each
// interacting with its own copy of a common K-armed bandit, run a local
// successive-elimination subroutine and vote against the arms they eliminate;
// a coordinator eliminates an arm globally once it has more than M votes and
// announces it (Algorithm 1, MASE). Four algorithms:
//
//   - dp_mase (Algorithms 2 and 4): local DP Successive Elimination in
//     epochs, Laplace noise on each epoch's fresh means; the votes are
//     ε-differentially private with respect to the rewards (Proposition 4.1).
//   - corrupted_elimination (Algorithm 3, §B.2): local Successive Elimination
//     at confidence 1−η_ξ, each vote sent only when its Bernoulli(1−ξ) mask is
//     1; an observer of one agent's votes infers its best arm with
//     probability at most 1−η (Proposition 5.1). ξ = 0 is Féraud et al.
//   - central: agents ship raw rewards; no privacy (a baseline).
//   - independent: no communication (a baseline, simulation only).
//
// Roles: coordinator, agent ×N. What each learns: an agent, its own rewards
// and the global eliminations; the coordinator, the votes (arm indices and
// which agent cast them) — or, in central, every raw reward. Nothing else
// crosses the wire. The spec's keys, the choices where the paper is ambiguous
// and the experiments (Figures 1, 5, 6) are in docs/protocols/bai.md.
package bai
