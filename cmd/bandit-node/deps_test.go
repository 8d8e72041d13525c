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

// TestNoLab keeps the research lab out of the daemon's binary: the papers'
// experiments and their figures are bandit-lab's (cmd/bandit-lab), and the
// plotting, font, LaTeX and PDF packages they draw with must not come back
// into bandit-node through any import, direct or not.
func TestNoLab(t *testing.T) {
	const why = "the daemon's binary carries no experiments, figures or their dependencies: they are bandit-lab's"
	deptest.Forbid(t, "./...", map[string]string{
		"github.com/bandit-node/bandit-node/experiment": why,
		"gonum.org/v1/plot":                             why,
		"codeberg.org/go-pdf":                           why,
		"codeberg.org/go-latex":                         why,
		"codeberg.org/go-fonts":                         why,
		"github.com/go-pdf":                             why,
		"github.com/go-latex":                           why,
		"github.com/go-fonts":                           why,
	})
}
