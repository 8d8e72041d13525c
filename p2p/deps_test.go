package p2p

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies enforces DESIGN.md's import rules: p2p never imports the
// daemon or the protocols.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node":     "imports point downward: node uses p2p",
		"github.com/bandit-node/bandit-node/protocol": "p2p carries bytes; protocols know nothing of it",
		"github.com/bandit-node/bandit-node/privacy":  "p2p has no use for it",
	})
}
