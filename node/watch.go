package node

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// redialTimeout bounds the redial that tells a peer that is gone (its
// daemon killed, its machine down, the network cut) from one whose
// connection is being replaced.
const redialTimeout = 2 * time.Second

// peerDisconnected is called when this node loses its last connection to
// address-book peer id. If a session runs with id and a redial fails, each
// such session is told that id cannot be reached, and why: it aborts
// within seconds, naming id, instead of waiting out the heartbeat timeout
// (lifecycle.Machine.Unreachable). A redial that succeeds changes nothing:
// a peer that restarted answers the session's next frame from its record.
func (n *Node) peerDisconnected(id peer.ID) {
	n.mu.Lock()
	var affected []*session
	if !n.closing {
		for _, s := range n.sessions {
			if _, ok := s.orgIndex[id]; ok && id != s.self {
				affected = append(affected, s)
			}
		}
	}
	n.mu.Unlock()
	if len(affected) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(n.hostCtx, redialTimeout)
		defer cancel()
		err := n.host.Redial(ctx, id)
		if err == nil || n.hostCtx.Err() != nil {
			return
		}
		reason := fmt.Sprintf("connection to %s closed; redial failed: %v", n.nameOf(id), err)
		n.log.Warn("a peer of running sessions is unreachable", "peer", n.nameOf(id), "sessions", len(affected), "err", err)
		for _, s := range affected {
			s.post(ctrlEvent{lost: id, reason: reason})
		}
	}()
}
