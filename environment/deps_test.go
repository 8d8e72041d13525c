package environment

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies enforces DESIGN.md: environment sits beside the
// protocol families, below the daemon; it imports the standard library
// and protocol, nothing that drives or networks a session.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/libp2p/go-libp2p":                   "environments talk to a program, a local service or a file, never to peers",
		"github.com/bandit-node/bandit-node/node":       "imports point downward: node uses environment",
		"github.com/bandit-node/bandit-node/p2p":        "environments know nothing of the peer network",
		"github.com/bandit-node/bandit-node/cmd":        "imports point downward",
		"github.com/bandit-node/bandit-node/experiment": "imports point downward",
		"github.com/bandit-node/bandit-node/bench":      "imports point downward",
	})
}
