package node

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/protocol"
)

// A local party whose role asks its environment (protocol.Asker) gets one
// when its roles start: the family's simulated one, or the program, service
// or file its [local] table names (environment.Config). An Immediate
// environment is answered inline, by whoever steps the role; any other has
// a goroutine of its own that answers the role's queries in order and hands
// each outcome to the session's loop (answers), so that neither the loop
// nor a stream's reader ever waits for the organization's program.

// maxQueriesQueued bounds the queries of one party waiting for its
// environment; a role asks one or a few at a time.
const maxQueriesQueued = 64

// envAnswer is an environment's answer to a query of local party mine[i].
type envAnswer struct {
	i   int
	o   protocol.Outcome
	err error
}

// envSlot is the environment of one local party.
type envSlot struct {
	env    protocol.Environment
	inline bool                // Immediate: answered by whoever steps the role
	queue  chan protocol.Query // otherwise: to its goroutine
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
// role was built from cfg, if the role asks one. run is held.
func (s *session) buildEnvironment(i int, cfg protocol.RoleConfig) *abortError {
	p := s.mine[i]
	if _, ok := s.roles[i].(protocol.Asker); !ok {
		return nil
	}
	econf := s.cfg.Environments[s.family][p.Role]
	var env protocol.Environment
	var err error
	if econf.Simulated() {
		ef, ok := s.fam.(protocol.Environmental)
		if !ok {
			return s.partyFailure(i, failEnvironmentSetup, fmt.Errorf("the role asks an environment, but %s builds none", s.family))
		}
		cfg.Rand = s.environmentRand(p)
		env, err = ef.SimulatedEnvironment(cfg)
		if err == nil && env == nil {
			err = errors.New("the family built no environment for a role that asks one")
		}
	} else {
		econf.Exec.Logger = s.n.log.With("session", s.id, "party", p.String())
		env, err = econf.New(environment.Session{ID: s.id, Protocol: s.family, Role: p.Role, Index: p.Index,
			Org: s.cfg.Node.Name}, s.environmentRand(p))
	}
	if err != nil {
		return s.partyFailure(i, failEnvironmentSetup, fmt.Errorf("%s: its environment: %w", p, err))
	}
	slot := &envSlot{env: env}
	if im, ok := env.(protocol.Immediate); ok && im.Immediate() {
		slot.inline = true
	} else {
		slot.queue = make(chan protocol.Query, maxQueriesQueued)
		go s.answerQueries(i, slot)
	}
	s.envs[i] = slot
	return nil
}

// answerQueries is the goroutine of a local party's environment that is
// not Immediate: it starts it (an exec program says hello), then answers
// the party's queries in order until the session's roles stop, handing
// the role each answer itself (answerInPlace).
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
			if !s.answerInPlace(envAnswer{i: i, o: o, err: err}) || err != nil {
				return
			}
		case <-s.envCtx.Done():
			return
		}
	}
}

// ask has the environment of local party mine[i] answer qs, the queries
// of a Ready batch: inline, handing the role each outcome (answered: the
// role may have queued more, which flush carries out), or through the
// environment's goroutine. run is held.
func (s *session) ask(i int, qs []protocol.Query) (answered bool, err *abortError) {
	slot := s.envs[i]
	if slot == nil {
		return false, s.partyFailure(i, failEnvironmentSetup, errors.New("the role asked its environment, but has none"))
	}
	if !slot.inline {
		for _, q := range qs {
			select {
			case slot.queue <- q:
			default:
				return false, s.partyFailure(i, failRole, fmt.Errorf("the role asked its environment more than %d queries at once", maxQueriesQueued))
			}
		}
		return false, nil
	}
	for _, q := range qs {
		o, err := slot.env.Answer(s.envCtx, q)
		if err := s.takeAnswer(envAnswer{i: i, o: o, err: err}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// takeAnswer hands local party mine[i] its environment's answer. run is
// held.
func (s *session) takeAnswer(a envAnswer) *abortError {
	if a.err != nil {
		return s.partyFailure(a.i, failEnvironment, fmt.Errorf("%s: %w", s.mine[a.i], a.err))
	}
	if err := s.answerRole(a.i, a.o); err != nil {
		return err
	}
	return nil
}

// answerInPlace hands local party mine[a.i] its environment's answer and
// carries out what the role does then, on the environment's goroutine, as
// stepInPlace does a message on a stream's reader: handing the answer to
// the session's loop instead would cost every answer a goroutine switch
// on the step's critical path (a SAMBA data owner asks once a step;
// docs/performance.md). A failure, or a panic in the node's code, is
// handed to the loop. It reports whether the roles still run: once they
// have stopped (closeEnvironments cancels envCtx, run held), the answer
// is dropped.
func (s *session) answerInPlace(a envAnswer) bool {
	s.run.Lock()
	defer s.run.Unlock()
	if s.envCtx.Err() != nil {
		return false
	}
	if s.roleErr != nil || s.finished[a.i] {
		return true
	}
	defer func() {
		if v := recover(); v != nil {
			s.failInPlace(s.internalError(v))
		}
	}()
	err := s.takeAnswer(a)
	if err == nil {
		err = s.flush(a.i)
	}
	if err == nil {
		err = s.drainLocal()
	}
	if err != nil {
		s.failInPlace(err)
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
