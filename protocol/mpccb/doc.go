// Package mpccb is the privacy-preserving contextual bandit of Hannun,
// Knott, Sengupta and van der Maaten ("Privacy-Preserving Contextual
// Bandits"): an ε-greedy linear contextual bandit (Algorithm 1) computed on
// secret shares (the engine is privacy/mpc) by P ≥ 2 feature parties, each
// holding some of every context's features, with a dealer supplying
// correlated randomness. The arm puller p′ learns each chosen arm a_t; the
// reward receiver p″ holds the rewards and learns each r_t. The feature
// parties and p″ ask their environments for their data (protocol.Asker):
// one context, or one row of rewards, a step.
//
// What each role learns: a feature party, its own features, uniformly random
// shares and openings x − m under fresh uniform masks — nothing about the
// others' features, the arms or the rewards; the dealer, the seeds and
// samples it draws, and no data at all; p′, a_t, which is log(|A|/ε)-DP with
// respect to the contexts (Theorem 1); p″, r_t — and, since here it holds the
// data set's reward table, which arms would have paid r_t (for Fashion-MNIST,
// r_t = 1 reveals a_t). An organisation playing two roles learns the union;
// Combine says so in the result. The dealer plays no other role
// (Separations says why).
//
// The spec's keys, the engine's operations and rounds, the choices where the
// paper is silent or ambiguous (tie-breaking, truncation, the range check)
// and the experiments are in docs/protocols/mpccb.md.
package mpccb
