package node

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
)

// cryptoRand is crypto/rand as an io.Reader: the randomness of every role in
// a real session.
type cryptoRand struct{}

func (cryptoRand) Read(b []byte) (int, error) { return rand.Read(b) }

// wallClock is the real clock handed to roles in the daemon.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// step feeds a received message to its local party.
func (s *session) step(m protocol.Message) *abortError {
	i := s.mineIndex(m.To)
	if i < 0 || s.finished[i] {
		return nil
	}
	if err := s.stepRole(i, m); err != nil {
		return err
	}
	if err := s.flush(i); err != nil {
		return err
	}
	return s.afterFlush()
}

// mineIndex returns the index in mine of local party p, or -1. A node plays
// a party or a few in a session, so a scan beats hashing p.
func (s *session) mineIndex(p protocol.Party) int {
	for i, q := range s.mine {
		if q.Index == p.Index && q.Role == p.Role {
			return i
		}
	}
	return -1
}

// drainLocal delivers the messages this node's parties sent each other.
func (s *session) drainLocal() *abortError {
	for {
		m, ok := s.transport.nextLocal()
		if !ok {
			return nil
		}
		if err := s.step(m); err != nil {
			return err
		}
	}
}

// flush carries out the Ready batch of local party mine[i]: its messages go
// out through the session's transport; its progress and result are recorded.
func (s *session) flush(i int) *abortError {
	p := s.mine[i]
	rd, err := s.readyRole(i)
	if err != nil {
		return err
	}
	if err := s.sendBatch(p, rd.Messages); err != nil {
		return err
	}
	if rd.Progress != nil {
		s.myProgress[p] = *rd.Progress
		s.dirty = true
	}
	if rd.Result != nil {
		s.finished[i] = true
		s.reports[p] = rd.Result.Report
		if rd.Result.Local != nil {
			raw, err := s.marshalLocal(i, rd.Result.Local)
			if err != nil {
				return err
			}
			s.update(true, func(r *record) {
				if r.Local == nil {
					r.Local = map[string]json.RawMessage{}
				}
				r.Local[p.String()] = raw
			})
		}
		s.n.log.Info("party finished", "session", s.id, "party", p.String())
	}
	return nil
}

// sendBatch sends the messages of one Ready batch of local party p, all
// within one deadline (batchContext), as well as each frame write within the
// messenger's write timeout.
func (s *session) sendBatch(p protocol.Party, msgs []protocol.Message) *abortError {
	if len(msgs) == 0 {
		return nil
	}
	ctx := s.batchContext()
	for _, m := range msgs {
		m.From = p
		if err := s.transport.Send(ctx, m); err != nil {
			e := abortf(true, "%s (%s): %v", p, s.n.cfg.Node.Name, err)
			e.unreachable = true
			return e
		}
	}
	return nil
}

// afterFlush sends progress (at most once a second) and, on a participant
// whose parties have all finished, their reports to the initiator.
func (s *session) afterFlush() *abortError {
	// The clock as the flush's last batch read it, if it sent one: a
	// busy session reads the clock once per message, not twice.
	now := s.sentAt
	s.sentAt = time.Time{}
	if s.dirty && now.IsZero() {
		now = time.Now()
	}
	if s.dirty && (now.Sub(s.lastSent) >= progressEvery || s.allMineFinished()) {
		s.dirty = false
		s.lastSent = now
		var sum protocol.Progress
		for _, pr := range s.myProgress {
			sum.Step += pr.Step
			sum.Total += pr.Total
			sum.Activity += pr.Activity
		}
		if s.initiated {
			s.progress[s.self] = sum
			s.publishProgress()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			err := s.n.sendControl(ctx, s.initiator, s.id, &nodepb.Control{Body: &nodepb.Control_Progress{
				Progress: &nodepb.Progress{Step: sum.Step, Total: sum.Total, Activity: sum.Activity}}})
			cancel()
			if err != nil {
				s.n.log.Debug("progress not delivered", "session", s.id, "err", err)
			}
			s.setProgress(sum)
		}
	}
	if s.initiated || s.sentDone || !s.allMineFinished() {
		return nil
	}
	done := &nodepb.Done{}
	for _, p := range s.mine {
		done.Reports = append(done.Reports, &nodepb.PartyReport{Role: p.Role, Index: uint32(p.Index), Report: s.reports[p]})
	}
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	if err := s.n.sendControl(ctx, s.initiator, s.id, &nodepb.Control{Body: &nodepb.Control_Done{Done: done}}); err != nil {
		e := abortf(true, "%s could not report its results to the initiator %s: %v", s.n.cfg.Node.Name, s.n.nameOf(s.initiator), err)
		e.unreachable = true
		return e
	}
	s.sentDone = true
	return nil
}

func (s *session) allMineFinished() bool {
	for _, f := range s.finished {
		if !f {
			return false
		}
	}
	return true
}

// publishProgress sums the organizations' progress into the record.
func (s *session) publishProgress() {
	var sum protocol.Progress
	for _, pr := range s.progress {
		sum.Step += pr.Step
		sum.Total += pr.Total
		sum.Activity += pr.Activity
	}
	if sum != s.lastSum {
		s.lastSum = sum
		s.lastProgress = time.Now()
	}
	s.setProgress(sum)
}

// batchContext returns the context that bounds one Ready batch's sends: its
// deadline is between 7/8 of sendTimeout and sendTimeout away. It is reused
// while that much is left, so that a busy session does not arm a timer for
// every batch (a context per batch was 3 % of a SAMBA data owner's CPU). A
// batch may be sent by a stream's reader (stepping in place), which reads
// nothing from its peer meanwhile, so its sends must be bounded as a whole:
// a write timeout, a stream reopened and a second write could otherwise hold
// it for three write timeouts. The session's runner owns it.
func (s *session) batchContext() context.Context {
	now := time.Now()
	s.sentAt = now
	if s.sendCtx == nil || s.sendDeadline.Sub(now) < sendTimeout-sendTimeout/8 {
		if s.sendCancel != nil {
			s.sendCancel()
		}
		s.sendDeadline = now.Add(sendTimeout)
		s.sendCtx, s.sendCancel = context.WithDeadline(context.Background(), s.sendDeadline)
	}
	return s.sendCtx
}
