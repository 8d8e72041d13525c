package node

import (
	"context"
	"fmt"
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

// fresh reports whether message seq of party p has not been handed over
// yet, and marks it handed over. A frame without a number (an older
// publisher's) is always fresh. A number more than topicSeqWindow ahead of
// the first of p's messages not received yet is not fresh, and the first
// such one returns a *topicWindowError: the session cannot go on (see
// topicSeqWindow).
func (r *topicReplay) fresh(p protocol.Party, seq uint64) (bool, error) {
	if seq == 0 {
		return true, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[protocol.Party]*sequenceWindow{}
	}
	w := r.seen[p]
	if w == nil {
		w = &sequenceWindow{}
		r.seen[p] = w
	}
	ok, over := w.add(seq)
	if over {
		return false, &topicWindowError{party: p, seq: seq, missing: w.upto + 1}
	}
	return ok, nil
}

// topicSeqWindow bounds the de-duplication set of a party's topic
// messages: a receiver remembers the number of the first message of the
// party it has not received (every one before it was handed over) and a
// bitmap of the topicSeqWindow numbers from there — IPsec's anti-replay
// window (RFC 4303, section 3.4.3), anchored at the first gap rather than
// at the highest number, so that no message is turned away as old that
// was never received. A message further ahead aborts the session: its
// publisher kept only its last topicLogSize frames for replays when it
// published it, and the missing one was not among them, so no replay can
// bring it any more — it is lost for good, or the number is forged.
// topicSeqWindow bits, 512 bytes, are held per party only while one of its
// messages is missing. It is a multiple of 64 (the bitmap's words).
const topicSeqWindow = topicLogSize

// topicWindowError is a party's topic message numbered more than
// topicSeqWindow ahead of the first of its messages not received.
type topicWindowError struct {
	party   protocol.Party
	seq     uint64 // the number received
	missing uint64 // the first number not received
}

func (e *topicWindowError) Error() string {
	return fmt.Sprintf("topic message %d of %s is more than %d ahead of its message %d, never received", e.seq, e.party, topicSeqWindow, e.missing)
}

// sequenceWindow is the set of the sequence numbers, from 1, of one
// party's topic messages handed over (see topicSeqWindow).
type sequenceWindow struct {
	upto uint64 // 1…upto are in
	// bits holds the numbers in upto+2 … upto+topicSeqWindow that are in,
	// number v at bit v % topicSeqWindow; nil while none is.
	bits  []uint64
	count int // numbers in bits
	// exceeded is set once a number beyond the window came: the session
	// aborts (topicReplay.fresh), and nothing more of the party is taken.
	exceeded bool
}

// add puts v in, and reports whether it was not in already. over reports
// the first number beyond the window, which is not put in; from it on,
// nothing is.
func (s *sequenceWindow) add(v uint64) (fresh, over bool) {
	switch {
	case s.exceeded || v <= s.upto:
		return false, false
	case v-s.upto > topicSeqWindow:
		s.exceeded = true
		return false, true
	case v != s.upto+1:
		if s.bits == nil {
			s.bits = make([]uint64, topicSeqWindow/64)
		}
		i, b := v%topicSeqWindow/64, uint64(1)<<(v%64)
		if s.bits[i]&b != 0 {
			return false, false
		}
		s.bits[i] |= b
		s.count++
		return true, false
	}
	s.upto = v
	for s.count > 0 {
		n := s.upto + 1
		i, b := n%topicSeqWindow/64, uint64(1)<<(n%64)
		if s.bits[i]&b == 0 {
			return true, false
		}
		s.bits[i] &^= b
		s.count--
		s.upto = n
	}
	s.bits = nil
	return true, false
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

// topicWindowExceeded aborts the session for err, a topic message of
// party p beyond the de-duplication window (topicSeqWindow). The reason,
// which every participant receives, names the organization, the party and
// the class of failure; the numbers stay in the local log.
func (s *session) topicWindowExceeded(p protocol.Party, err error) {
	org, _ := s.orgOf(p)
	s.n.metrics.Fail("overflow")
	s.n.log.Warn("a party's topic messages ran past the de-duplication window; aborting the session",
		"session", s.id, "peer", s.nameOf(org), "party", p.String(), "err", err)
	go s.requestAbort(fmt.Sprintf("%s (%s): its topic messages ran more than %d ahead of one %s never received "+
		"(the de-duplication window of a party's topic messages): a message was lost for good, or numbered falsely",
		p, s.nameOf(org), topicSeqWindow, s.cfg.Node.Name))
}
