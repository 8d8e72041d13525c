package sessions

import (
	"fmt"
	"runtime/debug"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"
)

// A panic in a family's code — a role's Start, Step, Tick or Ready, the
// family's NewRole or Combine — ends that session and nothing else: the
// party driver (protocol/drive) calls that code under a guard that recovers
// the panic, and the session (party.go) logs its stack, counts it
// (bandit_role_panics_total) and turns it into the session's abort,
// "internal error in role R at ORG", which every participant records. The role's state is not trusted afterwards:
// the session aborts at once. A panic in the node's own handlers of
// network input is recovered as well (recoverHandler), so that no frame
// from a peer can end the daemon.

// maxPanicText bounds the panic value quoted in an abort reason; the log
// has it whole.
const maxPanicText = 200

// panicked logs and counts a panic recovered in the family's code, where
// ("role data_owner[2]", or what the family was doing), and returns the
// session's abort.
func (s *session) panicked(where string, v any, stack []byte) *abortError {
	s.n.metrics.RolePanics.WithLabelValues(s.family).Inc()
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
func (n *Runtime) recoverHandler(v any, what string, from peer.ID) bool {
	if v == nil {
		return false
	}
	n.metrics.Fail("panic")
	n.log.Error("internal error handling a frame from a peer; dropped it", "what", what, "peer", n.nameOf(from),
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return true
}

// internalError logs and counts a panic recovered in the node's own code
// that runs a session and returns the session's abort.
func (s *session) internalError(v any) *abortError {
	s.n.metrics.Fail("panic")
	s.n.log.Error("internal error running a session; aborting it (the daemon and its other sessions go on)",
		"session", s.id, "protocol", s.family, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return s.nodeFailure("running the session", panicText(v))
}
