package node

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
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
	r, ok := s.roles[m.To]
	if !ok || s.finished[m.To] {
		return nil
	}
	if err := r.Step(m); err != nil {
		s.n.metrics.fail("role")
		return abortf(true, "%s (%s) rejected a message from %s (%s): %v", m.To, s.n.cfg.Node.Name, m.From, s.n.nameOf(s.peerOf[m.From]), err)
	}
	if err := s.flush(m.To); err != nil {
		return err
	}
	return s.afterFlush()
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

// flush carries out the Ready batch of local party p: its messages go out
// through the session's transport; its progress and result are recorded.
func (s *session) flush(p protocol.Party) *abortError {
	rd := s.roles[p].Ready()
	if err := s.sendBatch(p, rd.Messages); err != nil {
		return err
	}
	if rd.Progress != nil {
		s.myProgress[p] = *rd.Progress
		s.dirty = true
	}
	if rd.Result != nil {
		s.finished[p] = true
		s.reports[p] = rd.Result.Report
		if rd.Result.Local != nil {
			raw, err := json.Marshal(rd.Result.Local)
			if err != nil {
				return abortf(true, "encoding the result of %s: %v", p, err)
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

// sendBatch sends the messages of one Ready batch of local party p. The
// messenger bounds every stream open and frame write by its write timeout
// (sendTimeout), so the batch needs no deadline of its own — a context with
// one cost a timer per batch, 3 % of a SAMBA data owner's CPU.
func (s *session) sendBatch(p protocol.Party, msgs []protocol.Message) *abortError {
	ctx := context.Background()
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
	if s.dirty && (time.Since(s.lastSent) >= progressEvery || s.allMineFinished()) {
		s.dirty = false
		s.lastSent = time.Now()
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
			s.update(false, func(r *record) {
				r.Session.Progress = apitype.Progress{Step: sum.Step, Total: sum.Total, Activity: sum.Activity}
			})
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
	for _, p := range s.mine {
		if !s.finished[p] {
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
	s.update(false, func(r *record) {
		r.Session.Progress = apitype.Progress{Step: sum.Step, Total: sum.Total, Activity: sum.Activity}
	})
}
