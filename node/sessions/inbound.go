package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/encoding/protowire"
)

// This file is the inbound path of a role frame, from the wire to its
// party, in the order a frame takes it:
//
//   - roleStream.handle takes a frame from a stream of a family's
//     messenger; a frame whose head repeats the last one's is delivered
//     at once, any other is decoded (parseRoleFrame, decodeRoleFrame),
//     matched to its session (lookupBytes) and checked against the
//     session's parties, or rejected with a logged reason
//     (rejectRoleFrame);
//   - a topic message, from gossip or replayed on a stream, is checked
//     (topicMessage) and de-duplicated by its party's sequence window
//     (topicReplay.fresh) before it goes to each of this node's parties;
//   - session.deliver steps the message in place or queues it for the
//     session's loop, within the session's and the sender's buffer caps
//     (reserve, release; a sender over its cap aborts the session).
//
// The session's loop (sessionloop.go) hands a queued message to its party
// (party.go), the party driver steps the role (protocol/drive).

// roleStream receives the role frames of one inbound stream of a family's
// messenger. A sender's frames on its stream are to one party from one
// party of one session for as long as a session runs, and differ only in
// their bodies; so roleStream keeps the head of the last frame it
// delivered (its bytes before the body field) and what that head decoded
// to. A frame that begins with those very bytes and ends with one body
// field decodes to the same session and parties and passes the same checks,
// and is delivered without decoding its head again, which every message
// would otherwise pay (bench/HISTORY.md). Only the stream's read goroutine
// calls it.
type roleStream struct {
	n      *Runtime
	family string
	from   peer.ID

	head []byte           // of the last frame delivered; empty if none
	s    *session         // its session
	msg  protocol.Message // its sender and addressee, without the body

	cur *session // the session of the frame being handled, once known

	// waiting lists the sessions whose replies to this stream's frames
	// wait for the end of the burst (drained); rarely more than one.
	waiting []*session
}

// newRoleStream returns the frame handler of a stream of family from peer
// from (p2p.MessengerOptions.NewStreamHandler).
func (n *Runtime) newRoleStream(family string, from peer.ID) p2p.StreamHandler {
	r := &roleStream{n: n, family: family, from: from}
	return p2p.StreamHandler{Frame: r.handle, Drained: r.drained}
}

// handle routes one frame, lent for the call (BorrowedFrames).
func (r *roleStream) handle(frame []byte) {
	r.cur = nil
	defer r.recoverFrame()
	if len(r.head) > 0 {
		if r.s.gone.Load() {
			r.head, r.s, r.msg = r.head[:0], nil, protocol.Message{}
		} else if body, ok := bodyAfter(r.head, frame); ok {
			m := r.msg
			m.Body = body
			r.cur = r.s
			r.held(r.s.deliver(m, true, true), r.s)
			return
		}
	}
	r.decode(frame)
}

// decode routes a frame whose head it decodes and checks, and remembers the
// head of a frame it delivers. Only the path of a frame that is delivered is
// here; a rejected one goes to rejectRoleFrame, so that the code and stack
// every frame runs through stay small (with many daemons per core, each
// line of them is a miss).
func (r *roleStream) decode(frame []byte) {
	n := r.n
	f, err := decodeRoleFrame(frame)
	if err != nil {
		n.rejectRoleFrame(r.family, r.from, &f, nil, err)
		return
	}
	s := n.lookupBytes(f.SessionID)
	r.cur = s
	if s != nil && len(f.ToRole) == 0 && s.family == r.family && s.usesTopic() {
		// A topic message replayed on the stream (topic.go).
		m, err := s.topicMessage(r.from, &f)
		if err == nil {
			s.deliverTopic(m, f.TopicSeq, true)
			return
		}
		n.rejectRoleFrame(r.family, r.from, &f, nil, err)
		return
	}
	if s != nil {
		fromP, fromOrg, fromOK := s.party(f.FromRole, f.FromIndex)
		toP, toOrg, toOK := s.party(f.ToRole, f.ToIndex)
		if s.family == r.family && fromOK && fromOrg == r.from && toOK && toOrg == s.self {
			if f.HeadLen > 0 {
				r.head = append(r.head[:0], frame[:f.HeadLen]...)
				r.s, r.msg = s, protocol.Message{From: fromP, To: toP}
			}
			r.held(s.deliver(protocol.Message{From: fromP, To: toP, Body: f.Body}, true, true), s)
			return
		}
	}
	n.rejectRoleFrame(r.family, r.from, &f, s, nil)
}

// held notes, if held, that session s has messages waiting for the end of
// the stream's burst (drained).
func (r *roleStream) held(held bool, s *session) {
	if held && !slices.Contains(r.waiting, s) {
		r.waiting = append(r.waiting, s)
	}
}

// drained sends what the frames stepped in place since the last call left
// waiting: no further frame is buffered, so the burst is over
// (p2p.StreamHandler.Drained).
func (r *roleStream) drained() {
	for i, s := range r.waiting {
		s.flushHeld()
		r.waiting[i] = nil
	}
	r.waiting = r.waiting[:0]
}

// recoverFrame is deferred by handle. A panic in the node's own handling of
// a frame (a role's panic is recovered where it is stepped) aborts the
// frame's session, once the frame named one, with the reason; the panic
// then goes on to the messenger, which logs its stack and resets the stream
// (the frames behind it on the stream are lost, so the session could not
// go on anyway).
func (r *roleStream) recoverFrame() {
	v := recover()
	if v == nil {
		return
	}
	if s := r.cur; s != nil {
		s.n.metrics.Fail("panic")
		go s.requestAbortDetail(fmt.Sprintf("internal error in %s handling a frame from %s", s.cfg.Node.Name, s.nameOf(r.from)), panicText(v))
	}
	panic(v)
}

// lookupBytes is lookup for an ID still in a frame's bytes (no copy). The
// session found last is remembered: a running session's frames come one
// after another, and comparing their ID with it spares the lock and the map
// (with many daemons per core, every memory they touch is a cache miss).
func (n *Runtime) lookupBytes(id []byte) *session {
	if s := n.recent.Load(); s != nil && s.id == string(id) {
		return s
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.sessions[string(id)]
	if s != nil {
		n.recent.Store(s) // under n.mu, so never a session forget has removed
	}
	return s
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
	fresh, err := s.windows.fresh(m.From, seq)
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
			s.deliver(c, borrowed, false)
		}
	}
}

// rejectRoleFrame counts and logs a role frame that roleStream.decode does
// not deliver: decodeErr if it did not decode; otherwise s is its session
// (nil if not active here), and why it is refused is worked out again.
func (n *Runtime) rejectRoleFrame(family string, from peer.ID, f *roleFrameView, s *session, decodeErr error) {
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
// hold says that the caller is a stream's reader that will flush what m's
// step sends once its burst of frames has been read (roleStream.drained);
// deliver reports whether m's step left messages waiting for it.
func (s *session) deliver(m protocol.Message, borrowed, hold bool) (held bool) {
	r, known := s.roleOf(m.From)
	if known {
		// Its sender is alive, whatever its heartbeats' delay.
		if h := &s.heard[s.partyOrgs[r][m.From.Index]]; !h.Load() {
			h.Store(true)
		}
	}
	if s.run.TryLock() {
		if s.run.inPlace && s.queued.Load() == 0 {
			s.stepInPlace(m, hold)
			held = hold && len(s.run.transport.waiting) > 0
			s.run.Unlock()
			return held
		}
		s.run.Unlock()
	}
	var from peer.ID // orgOf's: "" for a party the session does not have
	if known {
		from = s.orgs[r][m.From.Index]
	}
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
	return false
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

// bodyAfter returns frame's body when frame is head, the bytes before the
// body field of a frame parseRoleFrame accepted (its HeadLen), followed by
// exactly one body field as appendBodyField writes it. Such a frame parses
// to head's fields and that body (FuzzRoleFrameHead).
func bodyAfter(head, frame []byte) ([]byte, bool) {
	if len(frame) < len(head)+2 || string(frame[:len(head)]) != string(head) || frame[len(head)] != bodyTag {
		return nil, false
	}
	tail := frame[len(head)+1:]
	body, n := protowire.ConsumeBytes(tail)
	return body, n == len(tail)
}

// errRoleFrameUTF8 reports a string field that is not UTF-8, which
// proto.Unmarshal refuses too.
var errRoleFrameUTF8 = errors.New("string field is not valid UTF-8")

// roleFrameView is a nodepb.RoleFrame decoded without copying: its byte
// fields alias the frame, so decoding allocates nothing.
type roleFrameView struct {
	SessionID, FromRole, ToRole, Body []byte
	FromIndex, ToIndex                uint32
	TopicSeq                          uint64
	// HeadLen is where the frame's last field starts when that field is the
	// body, and -1 when it is another field or the frame is empty: the
	// frame's bytes before HeadLen decode to its fields but the body.
	HeadLen int
}

// parseRoleFrame decodes b into f as proto.Unmarshal would into a
// nodepb.RoleFrame: unknown fields and known ones of another wire type are
// skipped, the last of a repeated field wins, strings must be UTF-8. f's
// fields alias b (the caller owns it). f.HeadLen says whether b ends with
// its body field, and where that field starts.
func parseRoleFrame(b []byte, f *roleFrameView) error {
	size := len(b)
	f.HeadLen = -1
	for len(b) > 0 {
		at := size - len(b)
		f.HeadLen = -1
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num > protowire.MaxValidNumber {
			return fmt.Errorf("field number %d out of range", num)
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType && (num == 1 || num == 2 || num == 4 || num == 6):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if num == 6 {
				f.Body, f.HeadLen = v, at
				continue
			}
			if !utf8.Valid(v) {
				return fmt.Errorf("field %d: %w", num, errRoleFrameUTF8)
			}
			switch num {
			case 1:
				f.SessionID = v
			case 2:
				f.FromRole = v
			default:
				f.ToRole = v
			}
		case typ == protowire.VarintType && (num == 3 || num == 5 || num == 7):
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			switch num {
			case 3:
				f.FromIndex = uint32(v)
			case 5:
				f.ToIndex = uint32(v)
			default:
				f.TopicSeq = v
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}

// topicWindows is what a session handed over of its parties' topic
// messages, by publishing party: their sequence windows. A message comes
// through gossip and again in a replay (transport.go), and is handed over
// once. Its methods are safe for concurrent use: gossip's handler and the
// streams' readers receive.
type topicWindows struct {
	mu   sync.Mutex
	seen map[protocol.Party]*sequenceWindow
}

// fresh reports whether message seq of party p has not been handed over
// yet, and marks it handed over. A frame without a number (an older
// publisher's) is always fresh. A number more than topicSeqWindow ahead of
// the first of p's messages not received yet is not fresh, and the first
// such one returns a *topicWindowError: the session cannot go on (see
// topicSeqWindow).
func (r *topicWindows) fresh(p protocol.Party, seq uint64) (bool, error) {
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

// joinTopic subscribes this node to the session's gossipsub topic when it
// plays a party of a family that publishes (protocol.Info.UsesTopic). Only the session's organizations may publish on it, and only
// as parties they play.
func (n *Runtime) joinTopic(s *session) error {
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
