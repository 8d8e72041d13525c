package node

import (
	"fmt"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

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
	n      *Node
	family string
	from   peer.ID

	head []byte           // of the last frame delivered; empty if none
	s    *session         // its session
	msg  protocol.Message // its sender and addressee, without the body

	cur *session // the session of the frame being handled, once known
}

// newRoleStream returns the frame handler of a stream of family from peer
// from (p2p.MessengerOptions.NewStreamHandler).
func (n *Node) newRoleStream(family string, from peer.ID) func(frame []byte) {
	r := &roleStream{n: n, family: family, from: from}
	return r.handle
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
			r.s.deliver(m, true)
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
		// A topic message replayed on the stream (topicreplay.go).
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
			s.deliver(protocol.Message{From: fromP, To: toP, Body: f.Body}, true)
			return
		}
	}
	n.rejectRoleFrame(r.family, r.from, &f, s, nil)
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
