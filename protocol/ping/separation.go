package ping

import "github.com/bandit-node/bandit-node/protocol"

// Separations implements protocol.Family: ping carries no private data, so
// no roles are separated.
func (Family) Separations() []protocol.Separation { return nil }
