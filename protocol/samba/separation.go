package samba

import "github.com/bandit-node/bandit-node/protocol"

// separations are the family's separations (protocol.Info): the pairs of roles one
// organization may not play together. The paper's threat model (§2.1) has
// honest-but-curious participants that do not collude; each pair below is a
// collusion that hands one organization both halves of something SAMBA
// splits between two roles:
//
//   - controller + data owner: comp's AES key, which every data owner holds
//     (one key, a channel key per direction derived from it), opens every
//     envelope the controller routes, and the controller knows which data
//     owner sent each; seed_α, which every data owner holds, unmasks them.
//   - controller + comp: the controller's permutation σ_t undoes the
//     shuffle of the scores comp opens, so comp's view — their order, ties,
//     ratios of differences — is tied to data owners, and so is the position
//     it picks (the arm pulled).
//   - controller + data customer: the data customer's Paillier key decrypts
//     each data owner's E(s_i), which the controller receives one by one
//     before it multiplies them.
//   - comp + data owner: seed_α unmasks every score comp opens, so comp
//     would see every data owner's exact score each step (which owner has
//     which stays hidden by σ_t, but the empirical means do not).
//   - data customer + data owner with K = 2: the cumulative reward minus
//     the organization's own sum is the other data owner's sum, its private
//     data. With K ≥ 3 the difference is a sum of two or more data owners'
//     rewards, no more than the cumulative reward itself reveals, and the
//     pair is allowed.
//
// Allowed, and why:
//   - data customer + comp: the data customer receives one message, the
//     product of the E(s_i), and comp never sees a Paillier ciphertext; the
//     union is the cumulative reward beside comp's own view (which the
//     result's leakage states), with nothing to combine them.
//   - two data owners: refused like any organization listed twice in a
//     role (an organization is one data owner: one arm).
func separations() []protocol.Separation {
	return []protocol.Separation{
		{A: RoleController, B: RoleOwner, Why: "the controller would open every data owner's score (every data owner holds comp's AES key and the masks' seed)"},
		{A: RoleController, B: RoleComp, Why: "the controller's permutation would tie every score comp opens, and the arm it picks, to its data owner"},
		{A: RoleController, B: RoleCustomer, Why: "the data customer's Paillier key would decrypt each data owner's E(s_i), which the controller receives one by one"},
		{A: RoleComp, B: RoleOwner, Why: "the data owners' mask seed would unmask every score comp opens"},
		{A: RoleCustomer, B: RoleOwner, Why: "with two data owners, the cumulative reward minus its own sum is the other data owner's sum",
			Applies: func(a protocol.Assignment) bool { return a.Count(RoleOwner) == 2 }},
	}
}
