package node

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// joinTopic subscribes this node to the session's gossipsub topic when it
// plays a party of a family that publishes (protocol.Info.UsesTopic). Only the session's organizations may publish on it, and only
// as parties they play.
func (n *Node) joinTopic(s *session) error {
	if len(s.mine) == 0 || !s.caps.Topic {
		return nil
	}
	var allowed []peer.ID
	for _, ids := range s.orgs {
		for _, id := range ids {
			if !slices.Contains(allowed, id) {
				allowed = append(allowed, id)
			}
		}
	}
	validate := func(from peer.ID, data []byte) (err error) {
		defer func() {
			if n.recoverHandler(recover(), "validating a topic message", from) {
				err = errors.New("internal error validating the message")
			}
		}()
		_, _, err = s.decodeTopicFrame(from, data)
		return err
	}
	handler := func(from peer.ID, data []byte) {
		defer func() { n.recoverHandler(recover(), "a topic message", from) }()
		n.metrics.CountTopic(s.family, true, len(data))
		m, seq, err := s.decodeTopicFrame(from, data)
		if err != nil {
			return
		}
		s.deliverTopic(m, seq, false)
	}
	t, err := n.gossip.Join(topicName(s.initiator, s.id), allowed, validate, handler)
	if err != nil {
		return fmt.Errorf("joining the session topic: %w", err)
	}
	s.topic = t
	return nil
}

// decodeTopicFrame checks a topic message: this session's, from a party its
// author plays, to nobody in particular. seq is its number among its
// party's (0 from a daemon that did not number them).
func (s *session) decodeTopicFrame(from peer.ID, data []byte) (protocol.Message, uint64, error) {
	f, err := decodeRoleFrame(data)
	if err != nil {
		return protocol.Message{}, 0, err
	}
	m, err := s.topicMessage(from, &f)
	return m, f.TopicSeq, err
}

// topicMessage checks decoded topic frame f from peer from.
func (s *session) topicMessage(from peer.ID, f *roleFrameView) (protocol.Message, error) {
	if string(f.SessionID) != s.id || len(f.ToRole) != 0 {
		return protocol.Message{}, errors.New("topic frame of another session or addressed to a party")
	}
	p, org, ok := s.party(f.FromRole, f.FromIndex)
	if !ok || org != from {
		return protocol.Message{}, fmt.Errorf("topic frame claims to come from %s[%d], which its author does not play", f.FromRole, f.FromIndex)
	}
	return protocol.Message{From: p, Topic: true, Body: f.Body}, nil
}

// deliverTopic hands topic message m, number seq of its party, to each of
// this node's parties but its author, unless it was handed over already
// (it came both through gossip and in a replay; topicreplay.go).
// borrowed is deliver's.
func (s *session) deliverTopic(m protocol.Message, seq uint64, borrowed bool) {
	fresh, err := s.topics.fresh(m.From, seq)
	if err != nil {
		s.topicWindowExceeded(m.From, err)
	}
	if !fresh {
		return
	}
	for _, q := range s.mine {
		if q != m.From {
			c := m
			c.To = q
			s.deliver(c, borrowed)
		}
	}
}

// rejectRoleFrame counts and logs a role frame that roleStream.decode does
// not deliver: decodeErr if it did not decode; otherwise s is its session
// (nil if not active here), and why it is refused is worked out again.
func (n *Node) rejectRoleFrame(family string, from peer.ID, f *roleFrameView, s *session, decodeErr error) {
	switch {
	case decodeErr != nil:
		n.metrics.Fail("decode")
		n.log.Warn("rejected a role frame", "peer", n.nameOf(from), "err", decodeErr)
		return
	case s == nil:
		n.metrics.Fail("unknown_session")
		n.log.Debug("role frame for a session that is not active here", "peer", n.nameOf(from), "session", string(f.SessionID))
		return
	}
	_, fromOrg, fromOK := s.party(f.FromRole, f.FromIndex)
	_, toOrg, toOK := s.party(f.ToRole, f.ToIndex)
	switch {
	case s.family != family:
		n.log.Warn("rejected a role frame sent on another protocol's stream", "peer", n.nameOf(from), "session", s.id, "stream", family)
	case !fromOK || fromOrg != from:
		n.log.Warn("rejected a role frame whose sender does not play the party it claims", "peer", n.nameOf(from), "session", s.id,
			"claimed", fmt.Sprintf("%s[%d]", f.FromRole, f.FromIndex))
	case !toOK || toOrg != s.self:
		n.log.Warn("rejected a role frame for a party this node does not play", "peer", n.nameOf(from), "session", s.id,
			"to", fmt.Sprintf("%s[%d]", f.ToRole, f.ToIndex))
	}
	n.metrics.Fail("rejected")
}

// deliver hands a received message to the session. While the roles of a
// family with small messages (protocol.Info.SmallMessages) run and nobody is
// driving them, the calling goroutine (the sender's stream reader) steps the
// message in place, sparing a busy session a hand-over to the session's
// loop for every message (bench/HISTORY.md). Otherwise the message is
// queued for the loop; it never waits for
// the session's lock, so a reader is never stuck behind a role's sends.
// A session that stays too far behind is aborted rather than left to grow:
// a queued message counts against the session's and its sender's buffer
// caps (reserve), and one over a cap is dropped and aborts the session.
// borrowed says that m.Body is lent for the call (it lies in the stream
// reader's buffer): stepped in place, it is the role's until Step returns,
// which is all that family promises to need; queued, it is copied first.
func (s *session) deliver(m protocol.Message, borrowed bool) {
	if s.run.TryLock() {
		if s.inPlace && s.queued.Load() == 0 {
			s.stepInPlace(m)
			s.run.Unlock()
			return
		}
		s.run.Unlock()
	}
	from, _ := s.orgOf(m.From)
	if ok, over, reason := s.reserve(from, len(m.Body)); !ok {
		if over {
			s.dropOverflow(from, reason)
		}
		return
	}
	if borrowed {
		m.Body = bytes.Clone(m.Body)
	}
	s.queued.Add(1)
	select {
	case s.inbox <- m:
		return
	default:
	}
	t := time.NewTimer(inboxTimeout)
	defer t.Stop()
	select {
	case s.inbox <- m:
	case <-s.done:
		s.queued.Add(-1)
		s.release(from, len(m.Body))
	case <-t.C:
		s.queued.Add(-1)
		s.release(from, len(m.Body))
		go s.requestAbort(fmt.Sprintf("%s could not keep up with the messages of %s", s.cfg.Node.Name, m.From))
	}
}

// maxRoleName bounds the role names a frame may carry.
const maxRoleName = 64

// decodeRoleFrame decodes and checks the shape of a role frame from the network.
func decodeRoleFrame(frame []byte) (roleFrameView, error) {
	var f roleFrameView
	if err := parseRoleFrame(frame, &f); err != nil {
		return f, fmt.Errorf("malformed role frame: %w", err)
	}
	if !store.ValidSessionID(f.SessionID) {
		return f, fmt.Errorf("role frame with a malformed session ID %.40q", f.SessionID)
	}
	if len(f.FromRole) == 0 || len(f.FromRole) > maxRoleName || len(f.ToRole) > maxRoleName {
		return f, fmt.Errorf("role frame of session %s with a missing or overlong role name", f.SessionID)
	}
	return f, nil
}

// topicName is the gossipsub topic of a session. It is derived from the
// initiator and the session ID by a hash, because topic subscriptions are
// announced to every connected peer: the name must not reveal the ID, which
// a peer outside the session could otherwise use to squat it.
func topicName(initiator peer.ID, id string) string {
	h := sha256.Sum256([]byte("bandit-session-topic\x00" + string(initiator) + "\x00" + id))
	return "/bandit/session/" + hex.EncodeToString(h[:16])
}
