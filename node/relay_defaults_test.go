package node

import (
	"testing"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/p2p"
)

// TestRelayDefaultValuesAreTheHosts: the [relay] limits written out from
// RelayDefaultValues load, and are the p2p host's defaults.
func TestRelayDefaultValuesAreTheHosts(t *testing.T) {
	v := RelayDefaultValues()
	text := "[node]\nname = \"acme\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n[relay]\n" +
		"max_bytes_per_circuit = " + v["relay.max_bytes_per_circuit"] + "\n" +
		"max_circuits_per_peer = " + v["relay.max_circuits_per_peer"] + "\n" +
		"max_reservations = " + v["relay.max_reservations"] + "\n"
	cfg, err := config.ParseConfig(t.TempDir()+"/config.toml", []byte(text), testRegistry(t))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	r := cfg.Relay
	if len(v) != 3 || r.MaxBytesPerCircuit == nil || *r.MaxBytesPerCircuit != p2p.DefaultRelayCircuitBytes ||
		r.MaxCircuitsPerPeer == nil || *r.MaxCircuitsPerPeer != p2p.DefaultRelayCircuitsPerPeer ||
		r.MaxReservations == nil || *r.MaxReservations != p2p.DefaultRelayReservations {
		t.Errorf("relay limits %v; the p2p host's defaults are %d, %d, %d",
			v, p2p.DefaultRelayCircuitBytes, p2p.DefaultRelayCircuitsPerPeer, p2p.DefaultRelayReservations)
	}
}
