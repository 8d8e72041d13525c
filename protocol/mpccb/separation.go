package mpccb

import "github.com/bandit-node/bandit-node/protocol"

// separations are the family's separations (protocol.Info): the dealer plays no other role.
// The paper's parties "do not collude" (§2) and its correlated randomness
// comes from a trusted third party (footnote 1); the engine's security
// argument is that every opened value x − m is masked by an m that only the
// dealer knows, and Theorem 1's log(|A|/ε)-DP of a_t rests on nobody who
// sees a_t or r_t knowing which steps explore. The dealer knows every mask
// and draws the exploration samples (y_t, v_t, γ_t), so:
//
//   - dealer + feature party: the masks open every value the parties
//     compute — all features, the model, the arms and the rewards.
//   - dealer + arm puller: knowing y_t, p′ would know that every
//     exploit step's a_t is the model's argmax on that step's context, a
//     deterministic function of the data, which voids the DP guarantee.
//   - dealer + reward receiver: the same for r_t, from which p″ learns the
//     arms that pay it (for Fashion-MNIST r_t = 1 reveals a_t).
//
// Allowed, with the result's `learns` saying what the organization learns:
//   - feature party + arm puller, feature party + reward receiver: the paper
//     places p′ and p″ outside the feature parties; we allow it because
//     a_t's DP holds against any side information, the organization's own
//     features included, and an organization that acts on the arm usually
//     holds context too. Such a feature party learns a DP function of the
//     others' features (every a_t, or r_t) instead of nothing.
//   - arm puller + reward receiver: (a_t, r_t) is a_t post-processed with
//     p″'s own reward table, so it stays log(|A|/ε)-DP.
func separations() []protocol.Separation {
	return []protocol.Separation{
		{A: RoleDealer, B: RoleFeature, Why: "the dealer knows the mask of every opening, so it would see every feature, arm and reward"},
		{A: RoleDealer, B: RolePuller, Why: "the dealer draws the exploration coins y_t, so p′ would know which arms are the model's choice on the contexts, and a_t would lose its log(|A|/ε)-DP"},
		{A: RoleDealer, B: RoleReceiver, Why: "the dealer draws the exploration coins y_t, so p″ would know which rewards come from the model's choice on the contexts, and r_t would lose its DP"},
	}
}
