package events

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the event stream is a leaf: the daemon publishes into
// it, the control API reads it.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":    "the daemon publishes events; the hub knows nothing of it",
		"github.com/bandit-node/bandit-node/node/api": "the API reads events, not the reverse",
		"github.com/bandit-node/bandit-node/protocol": "events carry JSON, whatever the family",
		"github.com/bandit-node/bandit-node/p2p":      "events carry JSON, whatever the network",
		"github.com/libp2p/go-libp2p$":                "events carry JSON, whatever the network",
	})
}
