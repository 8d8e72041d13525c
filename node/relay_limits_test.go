package node

import (
	"testing"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/p2p"
)

// TestRelayLimits: a [relay] key left out takes the p2p host's default (a
// zero field); a key set is carried over.
func TestRelayLimits(t *testing.T) {
	if l := relayLimits(config.RelayConfig{Service: true}); l != (p2p.RelayLimits{}) {
		t.Errorf("limits of a [relay] table without limit keys = %+v, want the p2p defaults (zero)", l)
	}
	if l := relayLimits(config.RelayConfig{MaxCircuitsPerPeer: new(3)}); l != (p2p.RelayLimits{CircuitsPerPeer: 3}) {
		t.Errorf("limits = %+v, want 3 circuits a peer", l)
	}
}
