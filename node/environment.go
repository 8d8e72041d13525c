package node

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/drive"
)

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
	if !s.parties[i].UseEnvironment(s.envCtx, env) {
		slot.queue = make(chan protocol.Query, maxQueriesQueued)
		go s.answerQueries(i, slot)
	}
	s.envs[i] = slot
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
	slot := s.envs[i]
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
	if s.roleErr != nil || s.finished(a.i) {
		return true
	}
	defer func() {
		if v := recover(); v != nil {
			s.failInPlace(s.internalError(v))
		}
	}()
	b, err := s.parties[a.i].Answer(a.q, a.o, a.err)
	aerr := s.carry(a.i, b, err)
	if aerr == nil {
		aerr = s.drainLocal()
	}
	if aerr != nil {
		s.failInPlace(aerr)
	}
	return true
}

// closeEnvironments stops the environments' goroutines and releases what
// the environments hold (an exec program is stopped).
func (s *session) closeEnvironments() {
	if s.envCancel != nil {
		s.envCancel()
	}
	for i, slot := range s.envs {
		if slot == nil {
			continue
		}
		if err := slot.env.Close(); err != nil {
			s.n.log.Warn("closing a party's environment", "session", s.id, "party", s.mine[i].String(), "err", err)
		}
	}
}
