package sessions

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/node/lifecycle"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"
)

// controlQueueSize bounds the control frames waiting to go to one peer in one
// session. A frame over it is dropped: every control message the lifecycle
// waits on an answer to is repeated (lifecycle), so a drop delays, never
// loses, and the loop never waits on a slow peer.
const controlQueueSize = 64

// controlSender sends one session's control frames to one peer, in order, from
// its own goroutine, so that the session's loop never blocks on a send.
// A frame that cannot be sent — but for heartbeats and progress, whose
// loss the lifecycle's timeouts judge — is reported to the loop as the
// peer being unreachable.
type controlSender struct {
	frames chan outFrame
	done   chan struct{}
}

type outFrame struct {
	kind  lifecycle.Kind
	frame *nodepb.Control
}

// sendControl queues control message m for its recipient.
func (s *session) sendControl(m lifecycle.Msg) {
	if int(m.To) >= len(s.members) || m.To < 0 {
		return
	}
	to := s.members[m.To]
	cs := s.life.senders[to]
	if cs == nil {
		cs = &controlSender{frames: make(chan outFrame, controlQueueSize), done: make(chan struct{})}
		s.life.senders[to] = cs
		go s.sendLoop(to, cs)
	}
	select {
	case cs.frames <- outFrame{kind: m.Kind, frame: s.toControl(m)}:
	default:
		s.n.metrics.Fail("send")
		s.n.log.Warn("too many control frames waiting for a peer; dropped one (it is repeated if it matters)",
			"session", s.id, "peer", s.nameOf(to), "kind", m.Kind.String())
	}
}

// sendLoop sends the frames of cs to peer to until cs is closed.
func (s *session) sendLoop(to peer.ID, cs *controlSender) {
	defer close(cs.done)
	for f := range cs.frames {
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		err := s.n.sendControl(ctx, to, s.id, f.frame)
		cancel()
		if err == nil {
			continue
		}
		switch f.kind {
		case lifecycle.Heartbeat, lifecycle.Progress:
			s.n.log.Debug("control frame not delivered", "session", s.id, "peer", s.nameOf(to), "kind", f.kind.String(), "err", err)
		default:
			select {
			case s.ctrl <- ctrlEvent{lost: to, reason: err.Error()}: // it names the peer (Node.sendControl)
			default: // the loop has ended, or is flooded: its timeouts will judge
			}
		}
	}
}

// closeSenders lets every control sender send what it holds — the abort or the
// completion that ended the session, most likely — within ShutdownGrace,
// and waits for them.
func (s *session) closeSenders() {
	deadline := time.After(ShutdownGrace)
	for _, cs := range s.life.senders {
		close(cs.frames)
	}
	for to, cs := range s.life.senders {
		select {
		case <-cs.done:
		case <-deadline:
			s.n.log.Warn("control frames still on their way when the session ended", "session", s.id, "peer", s.nameOf(to))
			return
		}
	}
}

// toControl encodes control message m for the wire.
func (s *session) toControl(m lifecycle.Msg) *nodepb.Control {
	c := &nodepb.Control{SessionId: s.id}
	switch m.Kind {
	case lifecycle.Propose:
		c.Body = &nodepb.Control_Propose{Propose: &nodepb.Propose{Spec: s.specText, Name: s.name, Versions: s.n.versionsOf(s.fam)}}
	case lifecycle.Accept:
		c.Body = &nodepb.Control_Accept{Accept: &nodepb.Accept{Versions: s.n.versionsOf(s.fam)}}
	case lifecycle.Decline:
		c.Body = &nodepb.Control_Decline{Decline: &nodepb.Decline{Reason: m.Reason}}
	case lifecycle.Start:
		c.Body = &nodepb.Control_Start{Start: &nodepb.Start{}}
	case lifecycle.Heartbeat:
		c.Body = &nodepb.Control_Heartbeat{Heartbeat: &nodepb.Heartbeat{}}
	case lifecycle.Progress:
		c.Body = &nodepb.Control_Progress{Progress: &nodepb.Progress{Step: m.Progress.Step, Total: m.Progress.Total, Activity: m.Progress.Activity}}
	case lifecycle.Done:
		done := &nodepb.Done{}
		for _, r := range m.Reports {
			done.Reports = append(done.Reports, &nodepb.PartyReport{Role: r.Party.Role, Index: uint32(r.Party.Index), Report: r.Body})
		}
		c.Body = &nodepb.Control_Done{Done: done}
	case lifecycle.Complete:
		c.Body = &nodepb.Control_Complete{Complete: &nodepb.Complete{}}
	case lifecycle.Abort:
		c.Body = &nodepb.Control_Abort{Abort: &nodepb.Abort{Reason: m.Reason}}
	}
	return c
}

// fromControl decodes control frame c from peer from as a lifecycle
// message of the session; ok is false if from is not of the session.
func (s *session) fromControl(from peer.ID, c *nodepb.Control) (lifecycle.Msg, bool) {
	o, ok := s.orgIndex[from]
	if !ok {
		return lifecycle.Msg{}, false
	}
	return controlMsg(c, o, s.orgIndex[s.self])
}

// controlMsg is control frame c as a lifecycle message from org from to org
// to; ok is false for a frame without a known body.
func controlMsg(c *nodepb.Control, from, to lifecycle.Org) (lifecycle.Msg, bool) {
	m := lifecycle.Msg{From: from, To: to}
	switch b := c.Body.(type) {
	case *nodepb.Control_Propose:
		m.Kind = lifecycle.Propose
	case *nodepb.Control_Accept:
		m.Kind = lifecycle.Accept
	case *nodepb.Control_Decline:
		m.Kind, m.Reason = lifecycle.Decline, b.Decline.GetReason()
	case *nodepb.Control_Start:
		m.Kind = lifecycle.Start
	case *nodepb.Control_Heartbeat:
		m.Kind = lifecycle.Heartbeat
	case *nodepb.Control_Progress:
		m.Kind = lifecycle.Progress
		m.Progress = protocol.Progress{Step: b.Progress.GetStep(), Total: b.Progress.GetTotal(), Activity: b.Progress.GetActivity()}
	case *nodepb.Control_Done:
		m.Kind = lifecycle.Done
		for _, r := range b.Done.GetReports() {
			m.Reports = append(m.Reports, lifecycle.Report{Party: protocol.Party{Role: r.GetRole(), Index: int(r.GetIndex())}, Body: r.GetReport()})
		}
	case *nodepb.Control_Complete:
		m.Kind = lifecycle.Complete
	case *nodepb.Control_Abort:
		m.Kind, m.Reason = lifecycle.Abort, b.Abort.GetReason()
	default:
		return m, false
	}
	return m, true
}

// sendControl sends one control frame of session id to peer to.
func (n *Runtime) sendControl(ctx context.Context, to peer.ID, id string, c *nodepb.Control) error {
	// c may be shared by concurrent senders: set the ID on a shallow copy.
	frame, err := proto.Marshal(&nodepb.Control{SessionId: id, Body: c.Body})
	if err != nil {
		return fmt.Errorf("encoding a control frame: %w", err)
	}
	if err := n.control.Send(ctx, to, frame); err != nil {
		n.metrics.Fail("send")
		return fmt.Errorf("sending to %s: %w", n.nameOf(to), err)
	}
	return nil
}

// answerEnded answers a control frame for a session that is no longer
// active here, from its record (lifecycle.AnswerEnded): an organization
// that missed how the session ended — an Abort sent while its proposal was
// still being examined, a lost Complete, a restart of this daemon — learns
// it from the answer to its next frame. Only the session's organizations
// are answered, and never an ending with an ending.
func (n *Runtime) answerEnded(from peer.ID, c *nodepb.Control) {
	rec, err := n.store.Get(c.SessionId)
	if err != nil || !slices.Contains(rec.Peers, from.String()) {
		n.metrics.Fail("unknown_session")
		n.log.Debug("control frame for a session that is not active here", "peer", n.nameOf(from), "session", c.SessionId)
		return
	}
	msg, ok := controlMsg(c, 1, 0)
	if !ok {
		return
	}
	st := lifecycle.Status{Reason: rec.Session.Reason}
	switch rec.Session.State {
	case stateCompleted:
		st.Phase = lifecycle.Completed
	case stateAborted:
		st.Phase = lifecycle.Aborted
	}
	reply, ok := lifecycle.AnswerEnded(st, rec.Session.Local, msg)
	if !ok {
		return
	}
	frame := &nodepb.Control{Body: &nodepb.Control_Complete{Complete: &nodepb.Complete{}}}
	if reply.Kind == lifecycle.Abort {
		frame = &nodepb.Control{Body: &nodepb.Control_Abort{Abort: &nodepb.Abort{Reason: reply.Reason}}}
	}
	select {
	case n.proposals <- struct{}{}:
		go func() {
			defer func() { <-n.proposals }()
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			defer cancel()
			n.sendControl(ctx, from, c.SessionId, frame)
		}()
	default:
	}
}
