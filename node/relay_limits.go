package node

import (
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/p2p"
)

// relayLimits returns the relay service's limits for the p2p host from the
// [relay] table r (validated): a key that is not set takes the p2p
// default (a zero field).
func relayLimits(r config.RelayConfig) p2p.RelayLimits {
	var l p2p.RelayLimits
	if r.MaxBytesPerCircuit != nil {
		l.CircuitBytes = *r.MaxBytesPerCircuit
	}
	if r.MaxCircuitsPerPeer != nil {
		l.CircuitsPerPeer = *r.MaxCircuitsPerPeer
	}
	if r.MaxReservations != nil {
		l.Reservations = *r.MaxReservations
	}
	return l
}
