package sessions

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/drive"
)

// This node's parties of a session are driven by the party driver
// (protocol/drive), as the simulator drives its parties: the session is
// its shell. It builds each party, makes the calls — a message, a tick, an
// environment's answer — and carries out the batch each call hands back
// (carry): the messages go out through the session's transport, the
// progress and result are recorded, the queries go to the party's
// asynchronous environment. A party's failure becomes the session's abort
// (partyAbort): what crosses to the other organizations is decided in
// disclosure.go.

// startRoles builds and starts this node's parties.
func (s *session) startRoles() {
	s.run.Lock()
	defer s.run.Unlock()
	s.life.started = true
	for i, p := range s.mine {
		var rnd io.Reader = cryptoRand{}
		if s.n.roleRand != nil {
			rnd = s.n.roleRand(p)
		}
		cfg := protocol.RoleConfig{SessionID: s.id, Self: p, Assignment: s.assign,
			Params: s.params, Local: s.local[p.Role], Rand: rnd, Clock: wallClock{},
			Logger: s.n.log.With("session", s.id, "party", p.String())}
		d, err := drive.New(s.fam, s.caps, cfg)
		if err != nil {
			s.run.roleErr = s.partyAbort(i, err)
			return
		}
		s.run.parties[i] = d
		if !d.Asks() {
			continue
		}
		if err := s.buildEnvironment(i, cfg); err != nil {
			s.run.roleErr = err
			return
		}
	}
	for i, d := range s.run.parties {
		b, err := d.Start()
		if s.run.roleErr = s.carry(i, b, err); s.run.roleErr != nil {
			return
		}
	}
	if s.run.roleErr = s.drainLocal(); s.run.roleErr != nil {
		return
	}
	s.run.inPlace = s.caps.SmallMessages
}

// tickRoles ticks this node's unfinished parties, which the driver passes
// on to their roles and turns into an Activated role's activations at its
// rate.
func (s *session) tickRoles() {
	s.run.Lock()
	defer s.run.Unlock()
	if s.run.roleErr != nil {
		return
	}
	for i, d := range s.run.parties {
		b, err := d.Tick()
		if s.run.roleErr = s.carry(i, b, err); s.run.roleErr != nil {
			return
		}
	}
	s.run.roleErr = s.drainLocal()
}

// carry carries out batch b of local party mine[i], or turns err, how the
// party failed to produce it, into the session's abort. Its messages go
// out, its progress and result are recorded, its queries go to the party's
// asynchronous environment. run is held.
func (s *session) carry(i int, b drive.Batch, err error) *abortError {
	if err != nil {
		return s.partyAbort(i, err)
	}
	if err := s.sendBatch(i, b.Messages); err != nil {
		return err
	}
	if err := s.recordBatch(i, b); err != nil {
		return err
	}
	if len(b.Queries) > 0 {
		return s.ask(i, b.Queries)
	}
	return nil
}

// recordBatch records the progress and the result of a batch of local
// party mine[i].
func (s *session) recordBatch(i int, b drive.Batch) *abortError {
	p := s.mine[i]
	if b.Progress != nil {
		s.run.myProgress[p] = *b.Progress
		s.run.dirty = true
	}
	if b.Result == nil {
		return nil
	}
	s.run.reports[p] = b.Result.Report
	s.kickLoop() // it tells the lifecycle
	if b.Result.Local != nil {
		var raw json.RawMessage
		err := drive.Guard(drive.OpEncode, func() (err error) {
			raw, err = json.Marshal(b.Result.Local)
			return err
		})
		if err != nil {
			return s.partyAbort(i, err)
		}
		s.update(true, func(r *store.Record) {
			if r.Local == nil {
				r.Local = map[string]json.RawMessage{}
			}
			r.Local[p.String()] = raw
		})
	}
	s.n.log.Info("party finished", "session", s.id, "party", p.String())
	return nil
}

// finished reports whether local party mine[i] has finished. run is held.
func (s *session) finished(i int) bool { return s.run.parties[i] != nil && s.run.parties[i].Done() }

// partyAbort is the session's abort for err, how local party mine[i]
// failed (a *drive.Error): a class of failure that crosses to the other
// organizations, and the party's own error, which stays (disclosure.go).
// A panic is logged with its stack and counted.
func (s *session) partyAbort(i int, err error) *abortError {
	var de *drive.Error
	if !errors.As(err, &de) {
		return s.partyFailure(i, failRole, err)
	}
	if de.Panic != nil {
		return s.panicked("role "+s.mine[i].String(), de.Panic, de.Stack)
	}
	switch de.Op {
	case drive.OpBuild:
		return s.partyFailure(i, failRoleBuild, de.Err)
	case drive.OpStart:
		return s.partyFailure(i, failRoleStart, de.Err)
	case drive.OpStep:
		s.n.metrics.Fail("role")
		return s.partyFailure(i, failMessage, de.Err, de.From)
	case drive.OpActivate:
		return s.partyFailure(i, failRole, fmt.Errorf("activation: %w", de.Err))
	case drive.OpAnswer:
		return s.partyFailure(i, failEnvironmentAnswer, de.Err)
	case drive.OpEnvironment:
		if errors.Is(de.Err, drive.ErrNoEnvironment) {
			return s.partyFailure(i, failEnvironmentSetup, de.Err)
		}
		return s.partyFailure(i, failEnvironment, fmt.Errorf("%s: %w", s.mine[i], de.Err))
	case drive.OpEncode:
		return s.partyFailure(i, failResult, de.Err)
	}
	return s.partyFailure(i, failRole, de.Err)
}

// combine combines the parties' reports into the session's result, in
// JSON (the result's own MarshalJSON, if any, is the family's code too):
// the lifecycle's Combine.
func (s *session) combine(reports map[protocol.Party][]byte) ([]byte, error) {
	names := protocol.Assignment{Roles: s.snapshot().Session.Roles}
	var res any
	err := drive.Guard(drive.OpCombine, func() (err error) {
		res, err = s.fam.Combine(names, s.params, reports)
		return err
	})
	if err != nil {
		return nil, s.familyAbort("combining the reports", "combining the parties' reports", err)
	}
	var raw []byte
	err = drive.Guard(drive.OpEncode, func() (err error) {
		raw, err = json.Marshal(res)
		return err
	})
	if err != nil {
		return nil, s.familyAbort("encoding the result", "encoding the session's result", err)
	}
	return raw, nil
}

// familyAbort is the session's abort for err, a failure of the family's
// code that runs for no party (Combine, on the initiator): a panic there,
// doing panicWhat, or an error, doing what.
func (s *session) familyAbort(panicWhat, what string, err error) *abortError {
	var de *drive.Error
	if errors.As(err, &de) && de.Panic != nil {
		return s.panicked("protocol "+s.family+", "+panicWhat, de.Panic, de.Stack)
	}
	return s.nodeFailure(what, err.Error())
}

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
	b, err := s.run.parties[i].Step(m)
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

// drainLocal delivers the messages this node's parties sent each other,
// then sends what their messages to other organizations left waiting in
// the transport — unless the messages stepped are a burst's (transport.hold),
// whose replies wait for the burst's end (flushHeld). Every call that steps
// the parties ends with it. run is held.
func (s *session) drainLocal() *abortError {
	for {
		m, ok := s.run.transport.nextLocal()
		if !ok {
			break
		}
		if err := s.step(m); err != nil {
			return err
		}
	}
	if s.run.transport.hold {
		return nil
	}
	return s.flushOut()
}

// flushOut sends the messages waiting in the transport, each party's
// together (sessionTransport.flush); a failure is the sending party's
// abort, as a failed send is. run is held.
func (s *session) flushOut() *abortError {
	t := s.run.transport
	if len(t.waiting) == 0 {
		return nil
	}
	rt, err := t.flush(s.batchContext())
	if err == nil {
		return nil
	}
	i := max(s.mineIndex(rt.first), 0)
	e := s.partyFailure(i, failSend, fmt.Errorf("could not send to %s (%s): %w", rt.to, s.nameOf(rt.org), err), rt.to)
	if rt.org != s.self {
		e.unreachable = rt.org
	}
	return e
}

// flushHeld sends what a stream reader's burst of messages stepped in place
// left waiting (roleStream.drained). A goroutine that holds run meanwhile
// flushes when it is done stepping, and the loop is kicked, which flushes
// as it collects the roles' news (collectRoles), should it not step.
func (s *session) flushHeld() {
	if !s.run.TryLock() {
		s.kickLoop()
		return
	}
	defer s.run.Unlock()
	if err := s.flushOut(); err != nil {
		s.failInPlace(err)
	}
}

// sendBatch sends the messages of one batch of local party mine[i]: direct
// ones to other organizations wait in the transport until the step ends
// (drainLocal), then go out within one deadline (batchContext), as does a
// topic message, published at once; each write is also bounded by the
// messenger's write timeout.
func (s *session) sendBatch(i int, msgs []protocol.Message) *abortError {
	p := s.mine[i]
	for _, m := range msgs {
		m.From = p
		var err error
		if m.Topic {
			// What waits for other organizations goes first, as it
			// was sent first.
			if e := s.flushOut(); e != nil {
				return e
			}
			err = s.run.transport.publish(s.batchContext(), m)
		} else {
			err = s.run.transport.queue(m)
		}
		if err != nil {
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
// ends the session. A failure is handed to the loop. With hold, m is one
// of a stream's burst: what the parties send stays in the transport until
// the burst has been stepped (flushHeld).
func (s *session) stepInPlace(m protocol.Message, hold bool) {
	defer func() {
		s.run.transport.hold = false
		if v := recover(); v != nil {
			s.failInPlace(s.internalError(v))
		}
	}()
	s.run.transport.hold = hold
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
	s.run.inPlace = false
	if s.run.roleErr == nil {
		s.run.roleErr = err
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
	if s.run.sendCtx == nil || s.run.sendDeadline.Sub(now) < sendTimeout-sendTimeout/8 {
		if s.run.sendCancel != nil {
			s.run.sendCancel()
		}
		s.run.sendDeadline = now.Add(sendTimeout)
		s.run.sendCtx, s.run.sendCancel = context.WithDeadline(context.Background(), s.run.sendDeadline)
	}
	return s.run.sendCtx
}

// A local party whose role asks its environment (protocol.Asker) gets one
// when its roles start: the family's simulated one, or the program, service
// or file its [local] table names (environment.Config). An Immediate
// environment is answered by the party driver, within the call that asked;
// any other has a goroutine of its own that answers the party's queries in
// order and hands each outcome to the party itself (answerInPlace), so that
// neither the loop nor a stream's reader ever waits for the organization's
// program.

// maxQueriesQueued bounds the queries of one party waiting for its
// environment; a role asks one or a few at a time.
const maxQueriesQueued = 64

// envAnswer is an environment's answer to query q of local party mine[i].
type envAnswer struct {
	i   int
	q   protocol.Query
	o   protocol.Outcome
	err error
}

// envSlot is the environment of one local party.
type envSlot struct {
	env   protocol.Environment
	queue chan protocol.Query // nil for an Immediate one, answered by the party driver
	// meter is env, for an environment of the organization's own (a
	// program, a service, a file), counted and timed; nil for the
	// family's simulated one.
	meter *drive.Meter
}

// environmentRand is the randomness of local party p's simulated or
// sampled environment: crypto/rand, or in tests a seeded stream apart from
// the role's (Node.envRand).
func (s *session) environmentRand(p protocol.Party) io.Reader {
	if s.n.envRand != nil {
		return s.n.envRand(p)
	}
	return cryptoRand{}
}

// buildEnvironment builds the environment of local party mine[i], whose
// role was built from cfg and asks one, and hands it to the party. run is
// held.
func (s *session) buildEnvironment(i int, cfg protocol.RoleConfig) *abortError {
	p := s.mine[i]
	econf := s.cfg.Environments[s.family][p.Role]
	var env protocol.Environment
	var err error
	if econf.Simulated() {
		cfg.Rand = s.environmentRand(p)
		env, err = drive.SimulatedEnvironment(s.fam, cfg)
	} else {
		econf.Exec.Logger = s.n.log.With("session", s.id, "party", p.String())
		env, err = econf.New(environment.Session{ID: s.id, Protocol: s.family, Role: p.Role, Index: p.Index,
			Org: s.cfg.Node.Name}, s.environmentRand(p))
	}
	if err != nil {
		return s.partyFailure(i, failEnvironmentSetup, fmt.Errorf("%s: its environment: %w", p, err))
	}
	slot := &envSlot{env: env}
	if !econf.Simulated() {
		slot.meter = drive.NewMeter(env, string(econf.Source))
		slot.env = slot.meter
	}
	if !s.run.parties[i].UseEnvironment(s.envCtx, slot.env) {
		slot.queue = make(chan protocol.Query, maxQueriesQueued)
		go s.answerQueries(i, slot)
	}
	s.run.envs[i] = slot
	return nil
}

// answerQueries is the goroutine of a local party's environment that is
// not Immediate: it starts it (an exec program says hello), then answers
// the party's queries in order until the session's roles stop, handing
// the party each answer itself (answerInPlace).
func (s *session) answerQueries(i int, slot *envSlot) {
	if st, ok := slot.env.(interface{ Start(context.Context) error }); ok {
		if err := st.Start(s.envCtx); err != nil {
			s.answerInPlace(envAnswer{i: i, err: err})
			return
		}
	}
	for {
		select {
		case q := <-slot.queue:
			o, err := slot.env.Answer(s.envCtx, q)
			if !s.answerInPlace(envAnswer{i: i, q: q, o: o, err: err}) || err != nil {
				return
			}
		case <-s.envCtx.Done():
			return
		}
	}
}

// ask hands qs, queries of a batch of local party mine[i], to the party's
// asynchronous environment. run is held.
func (s *session) ask(i int, qs []protocol.Query) *abortError {
	slot := s.run.envs[i]
	if slot == nil || slot.queue == nil {
		return s.partyFailure(i, failEnvironmentSetup, errors.New("the role asked its environment, but has none"))
	}
	for _, q := range qs {
		select {
		case slot.queue <- q:
		default:
			return s.partyFailure(i, failRole, fmt.Errorf("the role asked its environment more than %d queries at once", maxQueriesQueued))
		}
	}
	return nil
}

// answerInPlace hands local party mine[a.i] its environment's answer and
// carries out what the party does then, on the environment's goroutine,
// as stepInPlace does a message on a stream's reader: handing the answer
// to the session's loop instead would cost every answer a goroutine
// switch on the step's critical path (a SAMBA data owner asks once a
// step; docs/performance.md). A failure, or a panic in the node's code, is
// handed to the loop. It reports whether the roles still run: once they
// have stopped (closeEnvironments cancels envCtx, run held), the answer
// is dropped.
func (s *session) answerInPlace(a envAnswer) bool {
	s.run.Lock()
	defer s.run.Unlock()
	if s.envCtx.Err() != nil {
		return false
	}
	if s.run.roleErr != nil || s.finished(a.i) {
		return true
	}
	defer func() {
		if v := recover(); v != nil {
			s.failInPlace(s.internalError(v))
		}
	}()
	b, err := s.run.parties[a.i].Answer(a.q, a.o, a.err)
	aerr := s.carry(a.i, b, err)
	if aerr == nil {
		aerr = s.drainLocal()
	}
	if aerr != nil {
		s.failInPlace(aerr)
	}
	return true
}

// takeEnvironmentUses keeps, once the roles have stopped, what each local
// party's environment of the organization's own did (envUses), and warns
// of one that starved its role: it answered none of the role's queries,
// so the party took no part (a slow program in a racing protocol, where
// the others finish first). The counts and the warning stay in this
// organization's record and log. run is held.
func (s *session) takeEnvironmentUses() {
	if s.run.envUses != nil {
		return
	}
	for i, slot := range s.run.envs {
		if slot == nil || slot.meter == nil {
			continue
		}
		p := s.mine[i]
		u := slot.meter.Use(len(slot.queue)).WithWarning(p)
		if u.Warning != "" {
			s.n.log.Warn("an environment starved its role", "session", s.id, "party", p.String(), "source", u.Source,
				"unanswered", u.Unanswered, "warning", u.Warning)
		}
		if s.run.envUses == nil {
			s.run.envUses = map[string]apitype.EnvironmentUse{}
		}
		s.run.envUses[p.String()] = apitype.EnvironmentUse(u)
	}
}

// closeEnvironments stops the environments' goroutines and releases what
// the environments hold (an exec program is stopped).
func (s *session) closeEnvironments() {
	if s.envCancel != nil {
		s.envCancel()
	}
	for i, slot := range s.run.envs {
		if slot == nil {
			continue
		}
		if err := slot.env.Close(); err != nil {
			s.n.log.Warn("closing a party's environment", "session", s.id, "party", s.mine[i].String(), "err", err)
		}
	}
}
