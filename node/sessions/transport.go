package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// sessionTransport is the daemon's carrier of role messages for the parties
// this node plays in one session: a direct message to a remote party goes over
// the family's long-lived stream to the organization that plays it, a topic
// message over the session's gossipsub topic, and a message to a party this
// node plays itself stays in memory. It is used with the session's run
// lock held; the stream and topic handlers feed the session.
//
// A direct message waits in its route until flush, which writes each
// route's waiting frames together (p2p.Sender.SendAll, in writes of up to
// 4 KiB): a burst of messages to one party — a role's batch of them, or its
// replies to a burst of frames that a stream's reader steps in place
// (hold) — costs the muxer, the encryption and the kernel a write for a
// few of them, not one each (docs/performance.md). The frames and their
// order on each link are those of one Send a message.
type sessionTransport struct {
	s         *session
	messenger *p2p.Messenger     // the family's role messenger
	local     []protocol.Message // to this node's own parties, in order
	routes    [][]route          // to party i of role r, worked out on first use
	// waiting lists the routes with frames to flush, in the order of
	// their first; frames is flush's scratch list of one route's frames.
	waiting []*route
	frames  [][]byte
	// hold says that the messages being stepped are a burst's, read by a
	// stream's reader in place: their replies wait for the burst's end
	// (the reader's Drained flushes), however many batches they come in.
	hold bool
}

// maxRouteKeep is the largest buffer of waiting frames a route keeps once
// they are flushed.
const maxRouteKeep = 1 << 20

// queue carries direct message m toward m.To: to a remote party it waits
// for flush, to one of this node's own parties in memory (nextLocal). Topic
// messages go through publish.
func (t *sessionTransport) queue(m protocol.Message) error {
	s := t.s
	r, ok := s.roleOf(m.To)
	if !ok {
		return fmt.Errorf("addressed a message to %s, which is not a party of the session", m.To)
	}
	org := s.orgs[r][m.To.Index]
	rt, err := t.route(r, m.To.Index, org)
	if err != nil {
		s.n.metrics.Fail("send")
		return fmt.Errorf("could not send to %s (%s): %w", m.To, s.nameOf(org), err)
	}
	if rt.sender == nil {
		t.local = append(t.local, m)
		return nil
	}
	if rt.head == nil || rt.from != m.From {
		rt.head = appendRoleHead(rt.head[:0], &nodepb.RoleFrame{SessionId: s.id, FromRole: m.From.Role,
			FromIndex: uint32(m.From.Index), ToRole: m.To.Role, ToIndex: uint32(m.To.Index)})
		rt.from = m.From
	}
	if len(rt.ends) == 0 {
		rt.to, rt.org, rt.first = m.To, org, m.From
		t.waiting = append(t.waiting, rt)
	}
	rt.out = appendBodyField(append(rt.out, rt.head...), m.Body)
	rt.ends = append(rt.ends, len(rt.out))
	if s.n.traceOut != nil {
		s.n.traceOut(s.id, m)
	}
	return nil
}

// flush writes every route's waiting frames, a route's together. On a
// failure it returns the route that failed (its frames, and those of the
// routes after it, are dropped: the session aborts).
func (t *sessionTransport) flush(ctx context.Context) (*route, error) {
	var failed *route
	var err error
	for _, rt := range t.waiting {
		if failed == nil {
			t.frames = t.frames[:0]
			start := 0
			for _, end := range rt.ends {
				t.frames = append(t.frames, rt.out[start:end])
				start = end
			}
			if err = rt.sender.SendAll(ctx, t.frames); err != nil {
				t.s.n.metrics.Fail("send")
				failed = rt
			}
		}
		rt.out, rt.ends = rt.out[:0], rt.ends[:0]
		if cap(rt.out) > maxRouteKeep {
			rt.out = nil
		}
	}
	clear(t.frames)
	t.waiting = t.waiting[:0]
	return failed, err
}

// route is how a message reaches one party: through sender, or, when this
// node plays the party, in memory (sender nil).
type route struct {
	sender *p2p.Sender
	known  bool // the route has been worked out
	// head is the encoding of a frame's fields but its body from party
	// from to this party (appendRoleHead), the same for every message
	// between the two: only the body is encoded for each.
	head []byte
	from protocol.Party
	// out holds the frames waiting for flush, one after the other, each
	// ending at its entry in ends; to, org and first name the party the
	// route reaches, its organization and the sender of the first of
	// them, for an abort's reason.
	out   []byte
	ends  []int
	to    protocol.Party
	org   peer.ID
	first protocol.Party
}

// route returns the route to party i of role r of the session, which org
// plays, working it out on first use.
func (t *sessionTransport) route(r, i int, org peer.ID) (*route, error) {
	if t.routes == nil {
		t.routes = make([][]route, len(t.s.orgs))
	}
	if t.routes[r] == nil {
		t.routes[r] = make([]route, len(t.s.orgs[r]))
	}
	rt := &t.routes[r][i]
	if rt.known {
		return rt, nil
	}
	if org != t.s.self {
		sd, err := t.messenger.Sender(org)
		if err != nil {
			return nil, err
		}
		rt.sender = sd
	}
	rt.known = true
	return rt, nil
}

// publish sends a topic message to every other party: this node's own ones
// in memory, the others over gossipsub.
func (t *sessionTransport) publish(ctx context.Context, m protocol.Message) error {
	s := t.s
	for _, q := range s.mine {
		if q != m.From {
			c := m
			c.To = q
			t.local = append(t.local, c)
		}
	}
	if s.topic == nil {
		return errors.New("the session has no topic")
	}
	frame, err := proto.Marshal(&nodepb.RoleFrame{SessionId: s.id, FromRole: m.From.Role, FromIndex: uint32(m.From.Index), Body: m.Body,
		TopicSeq: s.topics.nextSeq(m.From)})
	if err != nil {
		return fmt.Errorf("encoding a topic message: %w", err)
	}
	s.topics.published(frame, time.Now())
	if err := s.topic.Publish(ctx, frame); err != nil {
		s.n.metrics.Fail("send")
		return fmt.Errorf("could not publish on the session topic: %w", err)
	}
	s.n.metrics.CountTopic(s.family, false, len(frame))
	if s.n.traceOut != nil {
		s.n.traceOut(s.id, m)
	}
	return nil
}

// nextLocal pops the next message to one of this node's own parties.
func (t *sessionTransport) nextLocal() (protocol.Message, bool) {
	if len(t.local) == 0 {
		return protocol.Message{}, false
	}
	m := t.local[0]
	t.local = t.local[1:]
	return m, true
}

// Every message of a session travels in a nodepb.RoleFrame. The functions
// below write and read its bytes by hand, because protobuf's reflective code
// is a measurable share of a busy role's CPU (bench/HISTORY.md, "Comments
// moved"); FuzzRoleFrameCodec holds them to proto.Marshal and
// proto.Unmarshal byte for byte.

// appendRoleFrame appends f's protobuf encoding to b: the bytes proto.Marshal
// writes (fields in number order, zero values left out).
func appendRoleFrame(b []byte, f *nodepb.RoleFrame) []byte {
	return appendBodyField(appendRoleHead(b, f), f.Body)
}

// appendRoleHead appends the encoding of f's fields but its body: the head
// of every frame with f's addresses (see sessionTransport.Send).
func appendRoleHead(b []byte, f *nodepb.RoleFrame) []byte {
	b = appendStringField(b, 1, f.SessionId)
	b = appendStringField(b, 2, f.FromRole)
	b = appendVarintField(b, 3, uint64(f.FromIndex))
	b = appendStringField(b, 4, f.ToRole)
	return appendVarintField(b, 5, uint64(f.ToIndex))
}

// bodyTag is the one-byte tag of a role frame's body field (6, bytes).
var bodyTag = byte(protowire.EncodeTag(6, protowire.BytesType))

// appendBodyField appends the body field, if body is not empty, as the last
// field of a role frame.
func appendBodyField(b, body []byte) []byte {
	if len(body) == 0 {
		return b
	}
	b = append(b, bodyTag)
	return protowire.AppendBytes(b, body)
}

func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

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

// topicReplay is a session's record of the topic messages it published,
// numbered by party, for replays to a peer that connects again (what it
// received is de-duplicated by topicWindows, inbound.go). Its methods are
// safe for concurrent use: the session's goroutine publishes, the
// connection notifier replays.
type topicReplay struct {
	mu    sync.Mutex
	log   []topicEntry
	bytes int
	next  map[protocol.Party]uint64 // the next sequence number of each of this node's parties
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
func (n *Runtime) peerConnected(id peer.ID) {
	n.publishPeer(id, true)
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
	m := s.run.transport.messenger
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

// topicName is the gossipsub topic of a session. It is derived from the
// initiator and the session ID by a hash, because topic subscriptions are
// announced to every connected peer: the name must not reveal the ID, which
// a peer outside the session could otherwise use to squat it.
func topicName(initiator peer.ID, id string) string {
	h := sha256.Sum256([]byte("bandit-session-topic\x00" + string(initiator) + "\x00" + id))
	return "/bandit/session/" + hex.EncodeToString(h[:16])
}
