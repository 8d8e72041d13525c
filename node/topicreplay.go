package node

import (
	"context"
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
//     once, whichever way it came (topicReplay.fresh);
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
	next  map[protocol.Party]uint64       // the next sequence number of each of this node's parties
	seen  map[protocol.Party]*sequenceSet // what was handed over, by publishing party
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

// fresh reports whether message seq of party p has not been handed over
// yet, and marks it handed over. A frame without a number (an older
// publisher's) is always fresh.
func (r *topicReplay) fresh(p protocol.Party, seq uint64) bool {
	if seq == 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[protocol.Party]*sequenceSet{}
	}
	s := r.seen[p]
	if s == nil {
		s = &sequenceSet{}
		r.seen[p] = s
	}
	return s.add(seq)
}

// sequenceSet is a set of sequence numbers from 1, kept as the length of
// its prefix without gaps and the numbers above it.
type sequenceSet struct {
	upto  uint64              // 1…upto are in
	above map[uint64]struct{} // the others
}

// add puts v in, and reports whether it was not in already.
func (s *sequenceSet) add(v uint64) bool {
	if v <= s.upto {
		return false
	}
	if _, ok := s.above[v]; ok {
		return false
	}
	if v != s.upto+1 {
		if s.above == nil {
			s.above = map[uint64]struct{}{}
		}
		s.above[v] = struct{}{}
		return true
	}
	s.upto = v
	for {
		if _, ok := s.above[s.upto+1]; !ok {
			return true
		}
		delete(s.above, s.upto+1)
		s.upto++
	}
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
// session's topic (protocol.TopicUser).
func (s *session) usesTopic() bool {
	tu, ok := s.fam.(protocol.TopicUser)
	return ok && tu.UsesTopic()
}
