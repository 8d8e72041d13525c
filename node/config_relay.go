package node

import "fmt"

// RelayConfig is the [relay] table: circuit relay for organizations behind
// a NAT (p2p/relay.go).
type RelayConfig struct {
	// Service runs a circuit-relay v2 service on this node that serves
	// the address-book peers only: it admits reservations from them and
	// relays connections between two of them, with no duration or data
	// limit; anybody else is refused. Default false.
	Service bool `toml:"service"`
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
