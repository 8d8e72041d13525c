package metrics

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: metrics count what the runtime tells them and read the
// store; they know nothing of how sessions run or of the control API.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":         "the daemon feeds its metrics, not the reverse",
		"github.com/bandit-node/bandit-node/node/standing": "standing sessions report to metrics, not the reverse",
		"github.com/bandit-node/bandit-node/node/api":      "the control API serves metrics, not the reverse",
	})
}
