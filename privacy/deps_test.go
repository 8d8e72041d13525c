package privacy

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies enforces DESIGN.md: privacy imports nothing of ours and
// does no networking.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"net":                         "privacy does no networking",
		"github.com/libp2p/go-libp2p": "privacy does no networking",
		"github.com/bandit-node/bandit-node/dataset":  "privacy imports nothing of ours",
		"github.com/bandit-node/bandit-node/node":     "privacy imports nothing of ours",
		"github.com/bandit-node/bandit-node/p2p":      "privacy imports nothing of ours",
		"github.com/bandit-node/bandit-node/protocol": "privacy imports nothing of ours",
	})
}
