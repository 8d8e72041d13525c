package config

import "fmt"

// Bounds of the [relay] limit keys; the p2p host enforces the same
// (p2p.MinRelayCircuitBytes and the others: TestRelayLimitBoundsMatchP2P).
// The config schema does not import the runtime.
const (
	minRelayCircuitBytes = 1 << 20
	maxRelayCircuits     = 128
	maxRelayReservations = 128
)

// RelayConfig is the [relay] table: circuit relay for organizations behind
// a NAT (p2p/relay.go).
type RelayConfig struct {
	// Service runs a circuit-relay v2 service on this node that serves
	// the address-book peers only: it admits reservations from them and
	// relays connections between two of them, with no duration limit and
	// within the limits below; anybody else is refused. Default false.
	Service bool `toml:"service"`
	// MaxBytesPerCircuit is how many bytes one relayed connection may
	// carry, both directions together, before the relay resets it (the
	// peers connect again; a session's links resend what was lost). Nil:
	// the p2p host's default, 1 GiB; at least 1 MiB.
	MaxBytesPerCircuit *int64 `toml:"max_bytes_per_circuit"`
	// MaxCircuitsPerPeer is how many relayed connections may be open
	// through this relay at once from one peer, and to one peer. Nil:
	// 128; 1 to 128.
	MaxCircuitsPerPeer *int `toml:"max_circuits_per_peer"`
	// MaxReservations is how many peers may hold a reservation at this
	// relay at once (a peer holds one at most). Nil: 128; 1 to 128.
	MaxReservations *int `toml:"max_reservations"`
	// Via is the name of the address-book peer whose relay service this
	// node keeps a reservation at, for a node behind a NAT that accepts
	// no inbound connection: its peers reach it through that relay (their
	// [[peers]] entry for it says relay = that name). Default "": none.
	Via string `toml:"via"`
}

// DefaultRelayConfig returns the [relay] table's defaults: no service, no
// reservation.
func DefaultRelayConfig() RelayConfig { return RelayConfig{} }

// validate checks the table and the [[peers]] relay keys against the
// address book peers. Whether a named relay runs a service is known only
// at run time: the daemon logs a warning when it is refused there.
func (r RelayConfig) validate(peers []PeerConfig) error {
	if err := r.validateLimits(); err != nil {
		return err
	}
	names := make(map[string]bool, len(peers))
	for _, p := range peers {
		names[p.Name] = true
	}
	if r.Via != "" && !names[r.Via] {
		return fmt.Errorf("relay.via: %q is not the name of a [[peers]] entry; name the address-book peer whose relay this node reserves at", r.Via)
	}
	for i, p := range peers {
		switch {
		case p.Relay == "":
		case p.Relay == p.Name:
			return fmt.Errorf("peers[%d] (%s).relay: a peer cannot be its own relay; name another [[peers]] entry that runs [relay] service = true", i, p.Name)
		case !names[p.Relay]:
			return fmt.Errorf("peers[%d] (%s).relay: %q is not the name of a [[peers]] entry", i, p.Name, p.Relay)
		}
	}
	return nil
}

// peerRelays maps each [[peers]] name with a relay to its relay's name,
// for config_diff.go: changing it takes a restart.
func peerRelays(c *Config) map[string]string {
	m := map[string]string{}
	for _, p := range c.Peers {
		if p.Relay != "" {
			m[p.Name] = p.Relay
		}
	}
	return m
}

// validateLimits checks the limit keys that are set, naming the key of a bad
// value.
func (r RelayConfig) validateLimits() error {
	if v := r.MaxBytesPerCircuit; v != nil && *v < minRelayCircuitBytes {
		return fmt.Errorf("relay.max_bytes_per_circuit: %d is below the minimum %d (1 MiB); a session's relayed connection needs more", *v, minRelayCircuitBytes)
	}
	if v := r.MaxCircuitsPerPeer; v != nil && (*v < 1 || *v > maxRelayCircuits) {
		return fmt.Errorf("relay.max_circuits_per_peer: %d is out of range [1, %d]", *v, maxRelayCircuits)
	}
	if v := r.MaxReservations; v != nil && (*v < 1 || *v > maxRelayReservations) {
		return fmt.Errorf("relay.max_reservations: %d is out of range [1, %d]", *v, maxRelayReservations)
	}
	return nil
}
