package pfcb

import "github.com/bandit-node/bandit-node/protocol"

// separations are the family's separations (protocol.Info): P-FCB has one role, agent, and
// separates nothing beyond what every family does (one organization per
// agent). Each agent's (ε, δ)-DP comes from the Gaussian noise it adds to
// its own shared procurement totals, so it holds against the other agents
// whatever they know; there is no coordinator, key or mask to combine.
func separations() []protocol.Separation { return nil }
