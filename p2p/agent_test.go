package p2p

import (
	"fmt"
	"testing"
)

// TestPeerAgent checks that each host announces its Config.UserAgent and
// reads the other's in PeerStatus.Agent; an empty UserAgent announces
// DefaultUserAgent.
func TestPeerAgent(t *testing.T) {
	agents := []string{"bandit-node/1.0.0 (aaaaaaa)", ""}
	tn := newTestNet(t, 2, func(i int, cfg *Config) { cfg.UserAgent = agents[i] })
	tn.connectAll(t)
	want := []string{DefaultUserAgent, agents[0]} // what host i sees of the other
	for i, h := range tn.hosts {
		waitFor(t, fmt.Sprintf("%s to learn the other's agent", tn.names[i]), func() bool {
			return h.Peers()[0].Agent != ""
		})
		if got := h.Peers()[0].Agent; got != want[i] {
			t.Errorf("%s sees agent %q, want %q", tn.names[i], got, want[i])
		}
	}
}
