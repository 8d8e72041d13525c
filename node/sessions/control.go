package sessions

import (
	"bytes"
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"
)

// handleControl routes a control frame received from a peer.
func (n *Runtime) handleControl(from peer.ID, frame []byte) {
	c, err := decodeControl(frame)
	if err != nil {
		n.metrics.Fail("decode")
		n.log.Warn("rejected a control frame", "peer", n.nameOf(from), "err", err)
		return
	}
	s := n.lookup(c.SessionId)
	if p, ok := c.Body.(*nodepb.Control_Propose); ok && (s == nil || s.initiator != from || !bytes.Equal(s.specText, p.Propose.Spec)) {
		n.examine(from, c, p.Propose)
		return
	}
	// Anything else, and a proposal repeated by the initiator of a session
	// accepted here (its lifecycle answers it), goes to the session.
	if s == nil {
		n.answerEnded(from, c)
		return
	}
	if _, ok := s.orgIndex[from]; !ok || (!s.initiated && from != s.initiator) {
		n.metrics.Fail("rejected")
		n.log.Warn("rejected a control frame from a peer outside the session", "peer", n.nameOf(from), "session", c.SessionId)
		return
	}
	if a, ok := c.Body.(*nodepb.Control_Abort); ok {
		a.Abort.Reason = sanitizeReason(a.Abort.Reason)
	}
	if d, ok := c.Body.(*nodepb.Control_Decline); ok {
		d.Decline.Reason = sanitizeReason(d.Decline.Reason)
	}
	if a, ok := c.Body.(*nodepb.Control_Accept); ok && s.initiated {
		// A participant that would run other versions than the session's
		// declines, in effect, with both named (wireversion.go).
		if reason := acceptVersionsMismatch(s, n.nameOf(from), a.Accept.GetVersions()); reason != "" {
			c.Body = &nodepb.Control_Decline{Decline: &nodepb.Decline{Reason: reason}}
		} else if v := a.Accept.GetVersions(); v != nil {
			n.log.Debug("a participant accepted", "session", s.id, "peer", n.nameOf(from), "bandit_node", v.GetNode(), "wire", v.GetFamily())
		}
	}
	ok, over, reason := s.reserve(from, len(frame))
	if !ok {
		if over {
			s.dropOverflow(from, reason)
		} else {
			n.answerEnded(from, c)
		}
		return
	}
	select {
	case s.ctrl <- ctrlEvent{from: from, msg: c, size: len(frame)}:
	case <-s.done:
		s.release(from, len(frame))
		// The session ended while the frame waited: answer as an ended
		// session does, from its record (stored before done closes).
		n.answerEnded(from, c)
	case <-time.After(inboxTimeout):
		s.release(from, len(frame))
		n.log.Warn("session is not taking control frames; dropped one", "session", s.id, "peer", n.nameOf(from))
	}
}

// decodeControl decodes and checks the shape of a control frame from the
// network: a well-formed session ID and a known body.
func decodeControl(frame []byte) (*nodepb.Control, error) {
	var c nodepb.Control
	if err := proto.Unmarshal(frame, &c); err != nil {
		return nil, fmt.Errorf("malformed control frame: %w", err)
	}
	if !store.ValidSessionID(c.SessionId) {
		return nil, fmt.Errorf("control frame with a malformed session ID %.40q", c.SessionId)
	}
	if c.Body == nil {
		return nil, fmt.Errorf("control frame of session %s has no known body", c.SessionId)
	}
	if p, ok := c.Body.(*nodepb.Control_Propose); ok && (p.Propose == nil || len(p.Propose.Spec) > protocol.MaxSpecSize) {
		return nil, fmt.Errorf("proposal of session %s has no spec or one over %d bytes", c.SessionId, protocol.MaxSpecSize)
	}
	if p, ok := c.Body.(*nodepb.Control_Propose); ok && p.Propose.Name != "" && !config.ValidSessionName(p.Propose.Name) {
		return nil, fmt.Errorf("proposal of session %s has a malformed name %.80q", c.SessionId, p.Propose.Name)
	}
	return &c, nil
}
