package store

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the record store keeps files; it knows nothing of how
// sessions run, of peers or of the control API that serves its records.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":          "the daemon uses its store, not the reverse",
		"github.com/bandit-node/bandit-node/node/metrics":   "metrics read the store, not the reverse",
		"github.com/bandit-node/bandit-node/node/standing":  "standing sessions use the store, not the reverse",
		"github.com/bandit-node/bandit-node/node/api":       "the control API serves records, not the reverse",
		"github.com/bandit-node/bandit-node/node/lifecycle": "a record is data; the lifecycle is runtime",
		"github.com/bandit-node/bandit-node/p2p":            "records are local files",
	})
}
