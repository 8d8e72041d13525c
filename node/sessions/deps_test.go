package sessions

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the session runtime sits below the daemon; it knows
// nothing of the control API, the standing sessions' scheduler or the
// metrics listener, which reach it through its methods.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":         "the daemon builds the runtime, not the reverse",
		"github.com/bandit-node/bandit-node/node/api":      "the control API reaches the sessions through the daemon",
		"github.com/bandit-node/bandit-node/node/client":   "the runtime is no client of a daemon",
		"github.com/bandit-node/bandit-node/node/standing": "the scheduler proposes runs through the daemon's standing.Deps",
		"github.com/bandit-node/bandit-node/experiment":    "the papers' experiments live in bandit-lab",
		"github.com/bandit-node/bandit-node/cmd":           "imports point downward",
		"github.com/bandit-node/bandit-node/protocol/sim":  "the simulator drives roles in-process; the runtime drives them over the network",
	})
}
