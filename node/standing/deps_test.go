package standing

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the scheduler proposes runs through Deps; it imports
// nothing of the session runtime, the network or the control API.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":          "the daemon runs the scheduler, not the reverse",
		"github.com/bandit-node/bandit-node/node/api":       "the control API lists standing sessions, not the reverse",
		"github.com/bandit-node/bandit-node/node/metrics":   "the scheduler registers its own collectors",
		"github.com/bandit-node/bandit-node/node/lifecycle": "a run is proposed through Deps.Start",
		"github.com/bandit-node/bandit-node/p2p":            "whether a peer is connected comes through Deps.Connected",
	})
}
