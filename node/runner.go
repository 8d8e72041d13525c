package node

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// cryptoRand is crypto/rand as an io.Reader: the randomness of every role in
// a real session.
type cryptoRand struct{}

func (cryptoRand) Read(b []byte) (int, error) { return rand.Read(b) }

// wallClock is the real clock handed to roles in the daemon.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// step hands a received message to its local party.
func (s *session) step(m protocol.Message) *abortError {
	i := s.mineIndex(m.To)
	if i < 0 {
		return nil
	}
	b, err := s.parties[i].Step(m)
	return s.carry(i, b, err)
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

// sendBatch sends the messages of one batch of local party mine[i], all
// within one deadline (batchContext), as well as each frame write within the
// messenger's write timeout.
func (s *session) sendBatch(i int, msgs []protocol.Message) *abortError {
	if len(msgs) == 0 {
		return nil
	}
	p := s.mine[i]
	ctx := s.batchContext()
	for _, m := range msgs {
		m.From = p
		if err := s.transport.Send(ctx, m); err != nil {
			var e *abortError
			if m.Topic {
				e = s.partyFailure(i, failPublish, err)
			} else {
				e = s.partyFailure(i, failSend, err, m.To)
			}
			if org, ok := s.orgOf(m.To); ok && org != s.self && !m.Topic {
				e.unreachable = org
			}
			return e
		}
	}
	return nil
}

// kickLoop wakes the session's loop, to look at the roles (collectRoles).
func (s *session) kickLoop() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// stepInPlace steps m in the calling goroutine, as the loop would. run is
// held, and still is when stepInPlace returns, even after a panic in the
// node's code (a panic in a role's is recovered by step already), which
// ends the session. A failure is handed to the loop.
func (s *session) stepInPlace(m protocol.Message) {
	defer func() {
		if v := recover(); v != nil {
			s.failInPlace(s.internalError(v))
		}
	}()
	err := s.step(m)
	if err == nil {
		err = s.drainLocal()
	}
	if err != nil {
		s.failInPlace(err)
	}
}

// failInPlace hands a failure found while stepping in place to the loop.
// run is held.
func (s *session) failInPlace(err *abortError) {
	s.inPlace = false
	if s.roleErr == nil {
		s.roleErr = err
	}
	s.kickLoop()
}

// batchContext returns the context that bounds one Ready batch's sends: its
// deadline is between 7/8 of sendTimeout and sendTimeout away. It is reused
// while that much is left, so that a busy session does not arm a timer for
// every batch (bench/HISTORY.md). A
// batch may be sent by a stream's reader (stepping in place), which reads
// nothing from its peer meanwhile, so its sends must be bounded as a whole:
// a write timeout, a stream reopened and a second write could otherwise hold
// it for three write timeouts. The session's runner owns it.
func (s *session) batchContext() context.Context {
	now := time.Now()
	if s.sendCtx == nil || s.sendDeadline.Sub(now) < sendTimeout-sendTimeout/8 {
		if s.sendCancel != nil {
			s.sendCancel()
		}
		s.sendDeadline = now.Add(sendTimeout)
		s.sendCtx, s.sendCancel = context.WithDeadline(context.Background(), s.sendDeadline)
	}
	return s.sendCtx
}
