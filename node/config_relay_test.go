package node

import (
	"errors"
	"strings"
	"testing"
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
			if cfg.Relay != tt.relay {
				t.Errorf("relay = %+v, want %+v", cfg.Relay, tt.relay)
			}
		})
	}
}

// TestRelayKeysNeedRestart: a reload that changes [relay] or a peer's relay
// is refused, naming the key.
func TestRelayKeysNeedRestart(t *testing.T) {
	old := testConfigs(t, 3)[0]
	for _, tc := range []struct {
		key    string
		change func(*Config)
	}{
		{"relay.service", func(c *Config) { c.Relay.Service = true }},
		{"relay.via", func(c *Config) { c.Relay.Via = "node2" }},
		{"peers.relay", func(c *Config) { c.Peers[1].Relay = "node2" }},
	} {
		next := *old
		next.Peers = append([]PeerConfig(nil), old.Peers...)
		tc.change(&next)
		_, err := diffConfig(old, &next)
		var re *RestartError
		if !errors.As(err, &re) || len(re.Keys) != 1 || re.Keys[0] != tc.key {
			t.Errorf("changing %s: diffConfig error %v, want a restart error naming it", tc.key, err)
		}
	}
}
