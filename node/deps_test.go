package node

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the daemon sits below the commands and beside nothing
// of the research lab: no experiment, plotting or benchmark code reaches
// the binary every organization runs.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/cmd":        "imports point downward: the commands use the daemon",
		"github.com/bandit-node/bandit-node/experiment": "the papers' experiments live in bandit-lab, out of the daemon",
		"github.com/bandit-node/bandit-node/bench":      "benchmarks are tools, not the daemon",
		"gonum.org/v1/plot":                             "plots are the lab's",
	})
}
