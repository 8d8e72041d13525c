package sessions

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// What another organization may learn of a failure here is decided in this
// file, and only here. A session that fails at this organization ends
// everywhere with one reason, which every participant records, logs and
// serves: that reason names the organization, the party, the step and a
// class of failure (failure below) — "learner[0] (node5): its
// environment failed at step 12" — and never local text. What a role, an
// environment or the daemon itself said (an exec program's stderr, an
// answer's bytes, an http environment's URL, a path, a panic's value, a
// reward or an arm drawn from private data) is the abort's detail: it
// stays in this organization's record (Session.Detail), its log and its
// own operator's `session status`. A decline built from a local check
// (an environment that is not ready, a storage failure, local data that
// does not decode) is split the same way (localDecline).
//
// The classes' wording is fixed text; the only values formatted into a
// public reason are parties and organizations' address-book names (public
// to the session by its spec) and the step the party reports as its
// progress (which the initiator learns anyway).

// failure is a class of failure of a local party, as the session's other
// organizations learn it.
type failure uint8

const (
	// failEnvironmentSetup: the party's environment could not be built or
	// started (a program missing, a service refusing the first query).
	failEnvironmentSetup failure = iota + 1
	// failEnvironment: the environment failed to answer a query (a program
	// exited or wrote a malformed answer, a service failed).
	failEnvironment
	// failEnvironmentAnswer: the role refused what its environment
	// answered (an outcome the role cannot use).
	failEnvironmentAnswer
	// failRoleBuild: the family could not build the role from the spec
	// and this organization's local data.
	failRoleBuild
	// failRoleStart: the role failed to start.
	failRoleStart
	// failRole: the role failed on a tick or an activation.
	failRole
	// failMessage: the role rejected a message from another party; the
	// abort names the sender.
	failMessage
	// failResult: the party's local result could not be encoded.
	failResult
	// failInternal: the family's code or the daemon's own panicked.
	failInternal
	// failSend: a message could not be sent; the abort names the
	// recipient.
	failSend
	// failPublish: a message could not be published on the session's
	// topic.
	failPublish
)

// failureText is each class's public wording.
var failureText = [...]string{
	failEnvironmentSetup:  "its environment could not be set up",
	failEnvironment:       "its environment failed",
	failEnvironmentAnswer: "its role refused what its environment answered",
	failRoleBuild:         "its role could not be built from the spec and its local data",
	failRoleStart:         "its role failed to start",
	failRole:              "its role failed",
	failMessage:           "it rejected a message from %s",
	failResult:            "its local result could not be encoded",
	failInternal:          "internal error",
	failSend:              "could not send to %s",
	failPublish:           "could not publish on the session's topic",
}

// abortError ends a session. reason is what every participant records;
// detail is the local error behind it, which this organization alone
// records. Build one with partyFailure or nodeFailure, never from a
// local error's text.
type abortError struct {
	reason string
	detail string
	// unreachable, if set, is the peer a send failed to: it may have
	// gone away on purpose, and its own abort (which names the real
	// cause) may still be on its way (lifecycle.Machine.Unreachable).
	unreachable peer.ID
}

// Error is the whole local text: the public reason and the detail.
func (e *abortError) Error() string {
	if e.detail == "" {
		return e.reason
	}
	return e.reason + ": " + e.detail
}

// partyFailure is the abort of local party mine[i] for a failure of class
// c, err being what failed (the detail). other names the party the class
// refers to (failMessage's sender, failSend's recipient), with its
// organization. run is held (the party's progress is read).
func (s *session) partyFailure(i int, c failure, err error, other ...protocol.Party) *abortError {
	p := s.mine[i]
	what := failureText[c]
	if len(other) > 0 {
		o := other[0]
		org, _ := s.orgOf(o)
		what = fmt.Sprintf(what, fmt.Sprintf("%s (%s)", o, s.nameOf(org)))
	}
	e := &abortError{reason: fmt.Sprintf("%s (%s): %s%s", p, s.cfg.Node.Name, what, s.stepOf(i))}
	if err != nil {
		e.detail = err.Error()
	}
	return e
}

// stepOf says where local party mine[i] is, " at step N", from the
// progress it reports (which the initiator sees anyway), or nothing for a
// party that has reported none. The step of a query is not used: which
// data owner's environment is asked at which step can tell which arm was
// pulled. run is held.
func (s *session) stepOf(i int) string {
	if st := s.run.myProgress[s.mine[i]].Step; st > 0 {
		return fmt.Sprintf(" at step %d", st)
	}
	return ""
}

// nodeFailure is the abort of a failure of this organization's own code
// outside any party (a panic in the daemon's session code or in the
// family's Combine): the organization and what it was doing (fixed text
// of the caller's) cross; detail stays.
func (s *session) nodeFailure(doing string, detail string) *abortError {
	return &abortError{reason: fmt.Sprintf("internal error in %s %s", s.cfg.Node.Name, doing), detail: detail}
}

// declineError is a decline whose cause is local (an environment that is
// not ready, a storage failure, local data that does not decode): the
// initiator learns reason; the operator here reads detail in the log.
type declineError struct {
	reason string
	err    error
}

func (e *declineError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *declineError) Unwrap() error { return e.err }

// localDecline is the decline of a proposal for a local cause: org cannot
// take part for a reason of fixed text (what), err the local detail.
func localDecline(org, what string, err error) *declineError {
	return &declineError{reason: fmt.Sprintf("%s cannot take part: %s", org, what), err: err}
}

// publicDecline is the reason a decline sends for err: a local cause's
// public reason, or the text of any other error, which names only the
// proposal's own content and this organization's policy.
func publicDecline(err error) string {
	if d, ok := err.(*declineError); ok {
		return d.reason
	}
	return err.Error()
}

// sanitizeReason bounds a reason from the network and strips control
// characters, since it is logged, stored and relayed.
func sanitizeReason(r string) string {
	r = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, r)
	if len(r) > maxReason {
		r = r[:maxReason] + "…"
	}
	return r
}

// maxReason bounds the length of a decline or abort reason taken from the
// network.
const maxReason = 512
