package node

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"unicode/utf8"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// A panic in a family's code — a role's Start, Step, Tick or Ready, the
// family's NewRole or Combine — ends that session and nothing else: every
// call into that code defers one of the guards below, which recovers the
// panic, logs its stack, counts it (bandit_role_panics_total) and turns it
// into the session's abort, "internal error in role R: <panic value>", which
// every participant records. The role's state is not trusted afterwards:
// the session aborts at once. A panic in the node's own handlers of
// network input is recovered as well (recoverHandler), so that no frame
// from a peer can end the daemon.

// maxPanicText bounds the panic value quoted in an abort reason; the log
// has it whole.
const maxPanicText = 200

// guardRole is deferred by every call into the role of local party
// mine[i]: it recovers a panic and sets *errp to the session's abort.
func (s *session) guardRole(i int, errp **abortError) {
	if v := recover(); v != nil {
		*errp = s.panicked("role "+s.mine[i].String(), v, debug.Stack())
	}
}

// guardFamily is guardRole for the family's code that runs for no party
// (Combine, on the initiator): what names the call.
func (s *session) guardFamily(what string, errp **abortError) {
	if v := recover(); v != nil {
		*errp = s.panicked(what, v, debug.Stack())
	}
}

// panicked logs and counts a panic recovered in the family's code, where
// ("role data_owner[2]", or what the family was doing), and returns the
// session's abort.
func (s *session) panicked(where string, v any, stack []byte) *abortError {
	s.n.metrics.rolePanics.WithLabelValues(s.family).Inc()
	s.n.log.Error("a role panicked; aborting its session (the daemon and its other sessions go on)",
		"session", s.id, "protocol", s.family, "in", where, "panic", fmt.Sprint(v), "stack", string(stack))
	return &abortError{reason: fmt.Sprintf("internal error in %s at %s", where, s.cfg.Node.Name), detail: panicText(v)}
}

// panicText is a panic value as an abort reason quotes it: on one line, at
// most maxPanicText bytes.
func panicText(v any) string {
	t := sanitizeReason(fmt.Sprint(v))
	if len(t) > maxPanicText {
		cut := maxPanicText
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut] + "…"
	}
	return t
}

// recoverHandler is deferred by the node's handlers of network input that
// run outside a session's guards (a proposal's examination, a topic
// message's validation): it recovers a panic, logs its stack and counts it
// (bandit_errors_total{kind="panic"}), and reports whether there was one.
// The frame is dropped. Use it as
//
//	defer func() { if n.recoverHandler(recover(), what, from) { ... } }()
func (n *Node) recoverHandler(v any, what string, from peer.ID) bool {
	if v == nil {
		return false
	}
	n.metrics.fail("panic")
	n.log.Error("internal error handling a frame from a peer; dropped it", "what", what, "peer", n.nameOf(from),
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return true
}

// internalError logs and counts a panic recovered in the node's own code
// that runs a session and returns the session's abort.
func (s *session) internalError(v any) *abortError {
	s.n.metrics.fail("panic")
	s.n.log.Error("internal error running a session; aborting it (the daemon and its other sessions go on)",
		"session", s.id, "protocol", s.family, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return s.nodeFailure("running the session", panicText(v))
}

// startRole starts the role of local party mine[i].
func (s *session) startRole(i int) (err *abortError) {
	defer s.guardRole(i, &err)
	if e := s.roles[i].Start(); e != nil {
		return s.partyFailure(i, failRoleStart, e)
	}
	return nil
}

// stepRole feeds m to the role of local party mine[i].
func (s *session) stepRole(i int, m protocol.Message) (err *abortError) {
	defer s.guardRole(i, &err)
	if e := s.roles[i].Step(m); e != nil {
		s.n.metrics.fail("role")
		return s.partyFailure(i, failMessage, e, m.From)
	}
	return nil
}

// tickRole ticks the role of local party mine[i].
func (s *session) tickRole(i int) (err *abortError) {
	defer s.guardRole(i, &err)
	if e := s.roles[i].Tick(); e != nil {
		return s.partyFailure(i, failRole, e)
	}
	return nil
}

// answerRole hands the role of local party mine[i] its environment's
// outcome (protocol.Asker).
func (s *session) answerRole(i int, o protocol.Outcome) (err *abortError) {
	defer s.guardRole(i, &err)
	if e := s.roles[i].(protocol.Asker).Answer(o); e != nil {
		return s.partyFailure(i, failEnvironmentAnswer, e)
	}
	return nil
}

// readyRole takes the Ready batch of the role of local party mine[i].
func (s *session) readyRole(i int) (rd protocol.Ready, err *abortError) {
	defer s.guardRole(i, &err)
	return s.roles[i].Ready(), nil
}

// buildRole builds the role of local party mine[i].
func (s *session) buildRole(i int, cfg protocol.RoleConfig) (err *abortError) {
	defer s.guardRole(i, &err)
	r, e := s.fam.NewRole(cfg)
	if e != nil {
		return s.partyFailure(i, failRoleBuild, e)
	}
	s.roles[i] = r
	return nil
}

// marshalLocal encodes the local result of the role of local party mine[i].
func (s *session) marshalLocal(i int, v any) (raw json.RawMessage, err *abortError) {
	defer s.guardRole(i, &err)
	raw, e := json.Marshal(v)
	if e != nil {
		return nil, s.partyFailure(i, failResult, e)
	}
	return raw, nil
}

// combine combines the parties' reports into the session's result, in
// JSON (the result's own MarshalJSON, if any, is the family's code too):
// the lifecycle's Combine.
func (s *session) combine(reports map[protocol.Party][]byte) (raw []byte, err error) {
	var aerr *abortError
	defer func() {
		if aerr != nil {
			raw, err = nil, aerr
		}
	}()
	defer s.guardFamily("protocol "+s.family+", combining the reports", &aerr)
	names := protocol.Assignment{Roles: s.snapshot().Session.Roles}
	res, e := s.fam.Combine(names, s.params, reports)
	if e != nil {
		return nil, s.nodeFailure("combining the parties' reports", e.Error())
	}
	if raw, e = json.Marshal(res); e != nil {
		return nil, s.nodeFailure("encoding the session's result", e.Error())
	}
	return raw, nil
}
