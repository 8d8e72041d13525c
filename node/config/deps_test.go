package config

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: the config schema, its validation, the policy and the
// reload classification read and check a file; they import nothing of the
// daemon's runtime, its store, its network or its API, so that a tool can
// check a config without building a node.
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":          "the daemon imports its config, not the reverse",
		"github.com/bandit-node/bandit-node/node/store":     "the config names where records go; it does not keep them",
		"github.com/bandit-node/bandit-node/node/metrics":   "the config names the metrics listener; it serves nothing",
		"github.com/bandit-node/bandit-node/node/standing":  "standing sessions run on the config, not the reverse",
		"github.com/bandit-node/bandit-node/node/api":       "the control API serves the config, not the reverse",
		"github.com/bandit-node/bandit-node/node/lifecycle": "the session lifecycle is runtime",
		"github.com/bandit-node/bandit-node/node/client":    "the CLI's client is above the config",
		"github.com/bandit-node/bandit-node/p2p":            "a config is checked without a host",
		"github.com/libp2p/go-libp2p$":                      "a config is checked without a host",
		"github.com/libp2p/go-libp2p/p2p":                   "a config is checked without a host",
		"github.com/libp2p/go-libp2p-pubsub":                "a config is checked without a host",
	})
}
