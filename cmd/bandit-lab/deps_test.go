package main

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies keeps the lab a simulator's program: the experiments run
// the protocols' roles in protocol/sim, so bandit-lab reaches neither the
// daemon nor the network.
func TestDependencies(t *testing.T) {
	const why = "the experiments run in the simulator: bandit-lab needs no daemon and no network"
	deptest.Forbid(t, "./...", map[string]string{
		"github.com/bandit-node/bandit-node/node": why,
		"github.com/bandit-node/bandit-node/p2p":  why,
		"github.com/libp2p":                       why,
	})
}
