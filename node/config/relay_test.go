package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/p2p"
)

func TestRelayConfig(t *testing.T) {
	const idB = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
	const idC = "12D3KooWEyGY1BwenJqE1UUVyUwNVVohPKczdMEzsqBetK42ipEg"
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	peers := func(relayOfC string) string {
		s := "[[peers]]\nname = \"b\"\npeer_id = \"" + idB + "\"\naddrs = [\"/ip4/192.0.2.1/tcp/4001\"]\n" +
			"[[peers]]\nname = \"c\"\npeer_id = \"" + idC + "\"\n"
		if relayOfC != "" {
			s += "relay = \"" + relayOfC + "\"\n"
		}
		return s
	}
	tests := []struct {
		name, text string
		want       string // an error it names; "" for none
		relay      RelayConfig
	}{
		{name: "default: off", text: base + peers("")},
		{name: "service", text: base + "[relay]\nservice = true\n" + peers(""), relay: RelayConfig{Service: true}},
		{name: "via a book peer, peer behind it", text: base + "[relay]\nvia = \"b\"\n" + peers("b"), relay: RelayConfig{Via: "b"}},
		{name: "via an unknown peer", text: base + "[relay]\nvia = \"z\"\n" + peers(""), want: `relay.via: "z" is not the name of a [[peers]] entry`},
		{name: "peer's relay unknown", text: base + peers("z"), want: `peers[1] (c).relay: "z" is not the name of a [[peers]] entry`},
		{name: "peer is its own relay", text: base + peers("c"), want: "peers[1] (c).relay: a peer cannot be its own relay"},
		{name: "unknown key", text: base + "[relay]\nserve = true\n", want: "unknown key relay.serve"},
		{name: "limits", text: base + "[relay]\nservice = true\nmax_bytes_per_circuit = 268435456\nmax_circuits_per_peer = 8\nmax_reservations = 20\n" + peers(""),
			relay: RelayConfig{Service: true, MaxBytesPerCircuit: new(int64(256 << 20)), MaxCircuitsPerPeer: new(8), MaxReservations: new(20)}},
		{name: "bytes below 1 MiB", text: base + "[relay]\nmax_bytes_per_circuit = 1000\n", want: "relay.max_bytes_per_circuit: 1000 is below the minimum 1048576"},
		{name: "zero bytes", text: base + "[relay]\nmax_bytes_per_circuit = 0\n", want: "relay.max_bytes_per_circuit: 0 is below the minimum"},
		{name: "bytes as a string", text: base + "[relay]\nmax_bytes_per_circuit = \"1GiB\"\n", want: "max_bytes_per_circuit"},
		{name: "zero circuits", text: base + "[relay]\nmax_circuits_per_peer = 0\n", want: "relay.max_circuits_per_peer: 0 is out of range [1, 128]"},
		{name: "too many circuits", text: base + "[relay]\nmax_circuits_per_peer = 1000\n", want: "relay.max_circuits_per_peer: 1000 is out of range [1, 128]"},
		{name: "negative reservations", text: base + "[relay]\nmax_reservations = -1\n", want: "relay.max_reservations: -1 is out of range [1, 128]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("/etc/bandit/config.toml", []byte(tt.text), testRegistry(t))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one naming %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Relay, tt.relay) {
				t.Errorf("relay = %+v, want %+v", cfg.Relay, tt.relay)
			}
		})
	}
}

// TestRelayLimitBoundsMatchP2P: the config's bounds and the p2p host's are
// the same.
func TestRelayLimitBoundsMatchP2P(t *testing.T) {
	if minRelayCircuitBytes != p2p.MinRelayCircuitBytes || maxRelayCircuits != p2p.MaxRelayCircuitsPerPeer || maxRelayReservations != p2p.MaxRelayReservations {
		t.Errorf("config bounds %d, %d, %d; p2p's %d, %d, %d", minRelayCircuitBytes, maxRelayCircuits, maxRelayReservations,
			p2p.MinRelayCircuitBytes, p2p.MaxRelayCircuitsPerPeer, p2p.MaxRelayReservations)
	}
}
