package config

import (
	"strings"
	"testing"
)

func TestMetricsConfig(t *testing.T) {
	const peerID = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	onePeer := "[[peers]]\nname = \"b\"\npeer_id = \"" + peerID + "\"\n"
	tests := []struct {
		name, text string
		want       string // an error it names; "" for none
		listen     string
		minPeers   int
	}{
		{name: "default: off, one peer", text: base, minPeers: 1},
		{name: "on", text: base + "[metrics]\nlisten = \"0.0.0.0:9601\"\n" + onePeer, listen: "0.0.0.0:9601", minPeers: 1},
		{name: "min_peers 0", text: base + "[metrics]\nlisten = \"127.0.0.1:9601\"\nmin_peers = 0\n", listen: "127.0.0.1:9601"},
		{name: "off: min_peers not checked against the book", text: base + "[metrics]\nmin_peers = 3\n", minPeers: 3},
		{name: "unknown key", text: base + "[metrics]\nlisten_addr = \":9601\"\n", want: "unknown key metrics.listen_addr"},
		{name: "negative min_peers", text: base + "[metrics]\nmin_peers = -1\n", want: "metrics.min_peers: must be at least 0, got -1"},
		{name: "min_peers over the book", text: base + "[metrics]\nlisten = \"0.0.0.0:9601\"\nmin_peers = 2\n" + onePeer,
			want: "metrics.min_peers: 2 is more than the 1 peers of the address book ([[peers]]), so /readyz could never answer ready; set it to at most 1"},
		{name: "default min_peers with no peers", text: base + "[metrics]\nlisten = \"0.0.0.0:9601\"\n", want: "metrics.min_peers: 1 is more than the 0 peers"},
		{name: "no port", text: base + "[metrics]\nlisten = \"0.0.0.0\"\nmin_peers = 0\n", want: "metrics.listen: \"0.0.0.0\" is not host:port"},
		{name: "host name", text: base + "[metrics]\nlisten = \"metrics.example:9601\"\nmin_peers = 0\n", want: "the host must be an IP address"},
		{name: "bad port", text: base + "[metrics]\nlisten = \"0.0.0.0:http-ish\"\nmin_peers = 0\n", want: "metrics.listen: \"0.0.0.0:http-ish\""},
		{name: "not a number", text: base + "[metrics]\nmin_peers = \"one\"\n", want: "min_peers"},
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
			if cfg.Metrics.Listen != tt.listen || cfg.Metrics.MinPeers != tt.minPeers {
				t.Errorf("metrics = %+v, want listen %q min_peers %d", cfg.Metrics, tt.listen, tt.minPeers)
			}
		})
	}
}
