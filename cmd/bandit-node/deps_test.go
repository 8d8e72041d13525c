package main

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies enforces DESIGN.md's split between the CLI and the
// daemon: the commands reach the network through package node (and the
// benchmark harness, bench/pattern), never by importing p2p themselves.
func TestDependencies(t *testing.T) {
	deptest.ForbidDirect(t, "./...", map[string]string{
		"github.com/bandit-node/bandit-node/p2p": "the CLI reaches the network through node, not p2p",
	})
}
