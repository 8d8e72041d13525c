package sessions

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p/core/peer"
)

// redialTimeout bounds the redial that tells a peer that is gone (its
// daemon killed, its machine down, the network cut) from one whose
// connection is being replaced.
const redialTimeout = 2 * time.Second

// peerDisconnected is called when this node loses its last connection to
// address-book peer id. If a session runs with id and a redial is refused
// (or fails otherwise, but for want of an answer), each such session is
// told that id cannot be reached, and why: it aborts within seconds, naming
// id, instead of waiting out the heartbeat timeout
// (lifecycle.Machine.Unreachable). A redial that succeeds changes nothing:
// a peer that restarted answers the session's next frame from its record.
// A redial that gets no answer within redialTimeout also changes nothing:
// that is what a network cut looks like, as much as a machine that is down,
// and a cut shorter than session.peer_timeout must not end the session —
// the frames in flight are resent once the connection is back (p2p
// link.go), and the heartbeat timeout judges a peer that stays away. A peer
// that closes every connection at once for the whole of redialTimeout (its
// gater refuses us) is told as unreachable, with that class.
func (n *Runtime) peerDisconnected(id peer.ID) {
	n.publishPeer(id, false)
	affected := n.sessionsWith(id)
	if len(affected) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(n.hostCtx, redialTimeout)
		defer cancel()
		err := n.redial(ctx, id)
		if err == nil || n.hostCtx.Err() != nil {
			return
		}
		if noAnswer(ctx, err) && !p2p.ClosesAtOnce(err) {
			n.log.Warn("lost the connection to a peer of running sessions, which does not answer a redial (a network cut?); "+
				"the sessions wait for it up to session.peer_timeout", "peer", n.nameOf(id), "sessions", len(affected), "err", err)
			return
		}
		// The other organizations learn the class; the addresses tried
		// are this one's detail (disclosure.go).
		reason := fmt.Sprintf("connection to %s closed; redial failed: %s", n.nameOf(id), p2p.FailureClass(err))
		n.log.Warn("a peer of running sessions is unreachable", "peer", n.nameOf(id), "sessions", len(affected), "err", err)
		for _, s := range affected {
			s.post(ctrlEvent{lost: id, reason: reason, detail: err.Error()})
		}
	}()
}

// redialPoll is how often redial asks again whether a peer whose last
// connection closed at once is connected (the address-book dialer dials it,
// with backoff).
const redialPoll = 50 * time.Millisecond

// redial redials id within ctx. A peer whose last connection closed before
// its handshake completed is not dialed again at once (p2p's redialNow: the
// address-book dialer retries it with backoff); one such close is no
// verdict — a chaotic network closes fresh connections too — so redial
// waits, until ctx ends, for the dialer's connection, and returns the
// failure only if the peer still closes ours when ctx ends.
func (n *Runtime) redial(ctx context.Context, id peer.ID) error {
	t := time.NewTicker(redialPoll)
	defer t.Stop()
	for {
		err := n.host.Redial(ctx, id)
		if !p2p.ClosesAtOnce(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-t.C:
		}
	}
}

// sessionsWith returns the sessions running here with address-book peer
// id among their organizations.
func (n *Runtime) sessionsWith(id peer.ID) []*session {
	n.mu.Lock()
	defer n.mu.Unlock()
	var affected []*session
	if !n.closing {
		for _, s := range n.sessions {
			if _, ok := s.orgIndex[id]; ok && id != s.self {
				affected = append(affected, s)
			}
		}
	}
	return affected
}

// framesDropped is p2p.MessengerOptions.OnGiveUp: the messenger gave up on
// frames to peer id, so that every session running with id lacks some of
// what it sent, and aborts, saying why.
func (n *Runtime) framesDropped(id peer.ID, frames uint64, why string) {
	affected := n.sessionsWith(id)
	if len(affected) == 0 {
		return
	}
	reason := fmt.Sprintf("%d frames to %s could not be delivered: %s", frames, n.nameOf(id), why)
	n.log.Warn("frames to a peer of running sessions were dropped", "peer", n.nameOf(id), "sessions", len(affected), "reason", why)
	for _, s := range affected {
		s.post(ctrlEvent{lost: id, reason: reason})
	}
}

// noAnswer reports whether a redial within ctx failed for want of an
// answer at one of the peer's addresses at least — it timed out, or the
// network has no route to it — rather than being refused: a network cut,
// or a machine that is down, which session.peer_timeout judges. A daemon
// that is gone from a machine that is up refuses at once.
func noAnswer(ctx context.Context, err error) bool {
	var ne net.Error
	return ctx.Err() == context.DeadlineExceeded ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.ETIMEDOUT) ||
		errors.As(err, &ne) && ne.Timeout()
}
