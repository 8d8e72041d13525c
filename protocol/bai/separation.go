package bai

import "github.com/bandit-node/bandit-node/protocol"

// separations are the family's separations (protocol.Info): BAI separates no roles. Each
// agent's guarantee is against everybody else, the coordinator included,
// and comes from its own randomness — DP-MASE's Laplace noise on its
// rewards (ε-DP), Corrupted Elimination's corrupted votes ((ε, η)-privacy
// of its best arm) — so it holds whatever side information another party
// has: an organization that plays the coordinator and an agent learns its
// own rewards beside the votes, which tells it nothing more about another
// agent than the votes do. The coordinator holds no key or mask that an
// agent's privacy depends on. One organization playing two agents is
// refused like any organization listed twice in a role.
func separations() []protocol.Separation { return nil }
