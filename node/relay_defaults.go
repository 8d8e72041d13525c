package node

import (
	"strconv"

	"github.com/bandit-node/bandit-node/p2p"
)

// RelayDefaultValues returns the defaults of the [relay] limit keys, as
// DefaultValues returns the others: the limits the p2p host applies when a
// key is absent (RelayConfig's nil fields), written once, in p2p. The
// config schema does not import the p2p host; the daemon does.
func RelayDefaultValues() map[string]string {
	return map[string]string{
		"relay.max_bytes_per_circuit": strconv.FormatInt(p2p.DefaultRelayCircuitBytes, 10),
		"relay.max_circuits_per_peer": strconv.Itoa(p2p.DefaultRelayCircuitsPerPeer),
		"relay.max_reservations":      strconv.Itoa(p2p.DefaultRelayReservations),
	}
}
