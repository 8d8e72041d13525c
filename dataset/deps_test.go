package dataset

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies enforces DESIGN.md: dataset, like privacy, is a leaf that
// imports nothing of ours (protocol/mpccb and the tools import it), and does
// no networking.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"net":                         "dataset reads and writes local files only",
		"github.com/libp2p/go-libp2p": "dataset does no networking",
		"github.com/bandit-node/bandit-node/bench":      "dataset imports nothing of ours",
		"github.com/bandit-node/bandit-node/cmd":        "dataset imports nothing of ours",
		"github.com/bandit-node/bandit-node/experiment": "dataset imports nothing of ours",
		"github.com/bandit-node/bandit-node/node":       "dataset imports nothing of ours",
		"github.com/bandit-node/bandit-node/p2p":        "dataset imports nothing of ours",
		"github.com/bandit-node/bandit-node/privacy":    "dataset imports nothing of ours",
		"github.com/bandit-node/bandit-node/protocol":   "dataset imports nothing of ours",
	})
}
