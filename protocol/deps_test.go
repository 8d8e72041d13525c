package protocol_test

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies enforces DESIGN.md's import rules: protocol code never
// touches the network, libp2p, or the daemon's packages.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, "./...", map[string]string{
		"net":                                     "protocol code does no networking; drivers do",
		"github.com/libp2p/go-libp2p":             "protocol code knows nothing of libp2p",
		"github.com/bandit-node/bandit-node/p2p":  "imports point downward: node adapts p2p to protocol",
		"github.com/bandit-node/bandit-node/node": "imports point downward: node drives protocol",
	})
}
