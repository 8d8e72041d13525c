package node

import "github.com/bandit-node/bandit-node/p2p"

// relayDefaults returns the [relay] table with each limit key the p2p host
// applies when the key is absent (RelayConfig's nil fields): the defaults
// are written once, in p2p, and DefaultValues lists them from here.
func relayDefaults() RelayConfig {
	bytes := int64(p2p.DefaultRelayCircuitBytes)
	circuits, reservations := p2p.DefaultRelayCircuitsPerPeer, p2p.DefaultRelayReservations
	r := DefaultRelayConfig()
	r.MaxBytesPerCircuit, r.MaxCircuitsPerPeer, r.MaxReservations = &bytes, &circuits, &reservations
	return r
}
