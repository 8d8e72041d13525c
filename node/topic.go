package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Topic messages travel through gossipsub, which resends nothing: one
// published while a connection was down reaches that peer through another
// peer of the mesh, or the gossip of the last few seconds, or not at all —
// and its session would then wait at the protocol's barrier until it
// failed. Frames on streams are resent by their links (p2p link.go);
// topic messages get the same by the session's own means:
//
//   - each topic frame carries a sequence number, per publishing party
//     (RoleFrame.topic_seq), and the receiver hands a party's message over
//     once, whichever way it came (topicReplay.fresh), remembering the
//     numbers within a bounded window (topicSeqWindow);
//   - the publisher keeps the frames it published (topicReplay.log, the
//     last topicLogSize or topicLogBytes of them) and, when a peer of the
//     session connects again, sends it those of the last topicReplayWindow
//     directly, on the family's role stream, whose link delivers them.
//
// A replayed frame is checked as a topic message is: of this session, from
// a party its sender plays; it is a message the sender could have
// published anyway.

const (
	// topicLogSize and topicLogBytes bound the frames a session keeps for
	// replay.
	topicLogSize  = 4096
	topicLogBytes = 4 << 20
	// topicReplayWindow is how far back a replay reaches: a peer away
	// for longer has been given up on by session.peer_timeout.
	topicReplayWindow = 2 * time.Minute
)

// topicReplay is a session's record of topic messages, published and
// received, for replays and deduplication. Its methods are safe for
// concurrent use: the session's goroutine publishes, gossip's handler and
// the streams' readers receive, the connection notifier replays.
type topicReplay struct {
	mu    sync.Mutex
	log   []topicEntry
	bytes int
	next  map[protocol.Party]uint64          // the next sequence number of each of this node's parties
	seen  map[protocol.Party]*sequenceWindow // what was handed over, by publishing party
}

type topicEntry struct {
	at    time.Time
	frame []byte // the RoleFrame as published
}

// nextSeq numbers the next message party p publishes.
func (r *topicReplay) nextSeq(p protocol.Party) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		r.next = map[protocol.Party]uint64{}
	}
	r.next[p]++
	return r.next[p]
}

// published keeps frame, as published now, for replays.
func (r *topicReplay) published(frame []byte, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, topicEntry{at: now, frame: frame})
	r.bytes += len(frame)
	drop := 0
	for len(r.log)-drop > topicLogSize || r.bytes > topicLogBytes && drop < len(r.log)-1 {
		r.bytes -= len(r.log[drop].frame)
		drop++
	}
	if drop > 0 {
		r.log = append(r.log[:0], r.log[drop:]...)
	}
}

// since returns the frames published after t, oldest first.
func (r *topicReplay) since(t time.Time) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, e := range r.log {
		if e.at.After(t) {
			out = append(out, e.frame)
		}
	}
	return out
}

// peerConnected is called when this node connects to address-book peer
// id: every session running with id that publishes on its topic replays to
// it what it published lately (see topicReplay).
func (n *Node) peerConnected(id peer.ID) {
	for _, s := range n.sessionsWith(id) {
		if !s.usesTopic() {
			continue
		}
		frames := s.topics.since(time.Now().Add(-topicReplayWindow))
		if len(frames) == 0 {
			continue
		}
		go s.replayTopic(id, frames)
	}
}

// replayTopic sends frames, topic frames this node published, to peer id
// on the family's role stream.
func (s *session) replayTopic(id peer.ID, frames [][]byte) {
	m := s.transport.messenger
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	for _, f := range frames {
		if err := m.Send(ctx, id, f); err != nil {
			s.n.log.Debug("could not replay topic messages", "session", s.id, "peer", s.nameOf(id), "err", err)
			return
		}
	}
	s.n.log.Debug("replayed topic messages to a peer that connected again", "session", s.id, "peer", s.nameOf(id), "messages", len(frames))
}

// usesTopic reports whether the session's family publishes on the
// session's topic (protocol.Info.UsesTopic, decided by drive.CapsOf).
func (s *session) usesTopic() bool { return s.caps.Topic }

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

// topicName is the gossipsub topic of a session. It is derived from the
// initiator and the session ID by a hash, because topic subscriptions are
// announced to every connected peer: the name must not reveal the ID, which
// a peer outside the session could otherwise use to squat it.
func topicName(initiator peer.ID, id string) string {
	h := sha256.Sum256([]byte("bandit-session-topic\x00" + string(initiator) + "\x00" + id))
	return "/bandit/session/" + hex.EncodeToString(h[:16])
}
