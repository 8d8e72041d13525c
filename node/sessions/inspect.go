package sessions

import (
	"context"
	"maps"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
)

// What the daemon's diagnostics and its tests read of the runtime besides
// the records: counters, the messengers' statistics, the config a session
// runs under, the peaks of the receive buffers.

// ActiveCount returns how many sessions the node holds now.
func (n *Runtime) ActiveCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.sessions)
}

// SessionConfig returns the config the active session id runs under (the
// one in force when it was proposed or accepted), or false if no session
// of that ID is active.
func (n *Runtime) SessionConfig(id string) (*config.Config, bool) {
	s := n.lookup(id)
	if s == nil {
		return nil, false
	}
	return s.cfg, true
}

// ControlMessenger returns the messenger of the session-control streams
// (nil before Attach).
func (n *Runtime) ControlMessenger() *p2p.Messenger { return n.control }

// RoleMessenger returns the messenger of f's role streams at f's wire
// version, or nil if this node does not speak it.
func (n *Runtime) RoleMessenger(f protocol.Family) *p2p.Messenger { return n.roles[RoleProtocol(f)] }

// RoleMessengers returns the messengers of the role streams by protocol
// ID: a family's, per wire version it speaks.
func (n *Runtime) RoleMessengers() map[libp2pprotocol.ID]*p2p.Messenger { return maps.Clone(n.roles) }

// SendControl sends the session-control message c of session id to peer
// to, as the sessions do.
func (n *Runtime) SendControl(ctx context.Context, to peer.ID, id string, c *nodepb.Control) error {
	return n.sendControl(ctx, to, id, c)
}

// SpecParses returns how many spec texts this node has parsed: one per
// session it takes part in.
func (n *Runtime) SpecParses() int64 { return n.specParses.Load() }

// QueuePeaks returns the most bytes of from's frames this node held queued
// at once in all its sessions, and the most bytes each active session of
// ids held queued at once.
func (n *Runtime) QueuePeaks(from peer.ID, ids ...string) (peerPeak int64, sessionPeaks map[string]int64) {
	if b := n.live.Load().peerBuf[from]; b != nil {
		peerPeak = b.peak.Load()
	}
	sessionPeaks = map[string]int64{}
	for _, id := range ids {
		if s := n.lookup(id); s != nil {
			s.buf.mu.Lock()
			sessionPeaks[id] = s.buf.peak
			s.buf.mu.Unlock()
		}
	}
	return peerPeak, sessionPeaks
}
