package node

import (
	"github.com/bandit-node/bandit-node/internal/buildinfo"
	"github.com/bandit-node/bandit-node/p2p"
)

// WithBuild sets the running build: the API reports its version (as
// WithVersion does) and the libp2p host announces it to peers in its agent
// string, which their `peers` shows (see userAgent).
func WithBuild(info buildinfo.Info) Option {
	return func(n *Node) error {
		n.version = info.Version
		n.agent = userAgent(info)
		return nil
	}
}

// userAgent is the agent string announced for info:
// "bandit-node/<version> (<short revision>)", without the parenthesis when
// the build carries no revision.
func userAgent(info buildinfo.Info) string {
	s := p2p.DefaultUserAgent + "/" + info.Version
	if r := info.ShortRevision(); r != "" {
		s += " (" + r + ")"
	}
	return s
}
