package api

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the control API answers from its Backend; it reaches
// nothing of the daemon's runtime, store or network itself.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":          "the daemon implements the Backend; the API does not import it",
		"github.com/bandit-node/bandit-node/node/store":     "records reach the API as apitype values through the Backend",
		"github.com/bandit-node/bandit-node/node/standing":  "standing sessions reach the API through the Backend",
		"github.com/bandit-node/bandit-node/node/metrics":   "the API serves a registry it is given",
		"github.com/bandit-node/bandit-node/node/lifecycle": "the API starts and cancels sessions through the Backend",
		"github.com/bandit-node/bandit-node/p2p":            "peers reach the API as apitype values through the Backend",
	})
}
