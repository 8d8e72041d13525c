package p2p

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// Why an address-book peer is not connected, in classes the operator can act
// on. The dialer logs a line when the class changes, not at every attempt,
// and PeerStatus.Reason says it in words.

// failKind is the class of a failed attempt to connect to a peer.
type failKind int

const (
	failNone failKind = iota
	// failNoAddrs: the peer has no address to dial.
	failNoAddrs
	// failRefused: the peer's machine answered, and nothing listens there.
	failRefused
	// failUnreachable: no answer (a timeout, no route to the host).
	failUnreachable
	// failClosesAtOnce: the connection was made, and the peer closed it
	// within seconds: its gater refuses us, most likely because its
	// address book does not list us (yet).
	failClosesAtOnce
	// failDropped: the connection was made, identify ran, and it closed
	// within seconds all the same (a network that drops connections, a
	// peer that restarts).
	failDropped
	// failOther: anything else (a handshake that failed, another node
	// answering at the peer's address, ...).
	failOther
)

// reasonClosesAtOnce is the reason of a peer in the failClosesAtOnce class.
const reasonClosesAtOnce = "closes our connections at once: it may not have our peer card yet"

// dialError is a failed dial explained for the operator: its message names
// the real cause at each address tried (a QUIC address the dial policy held
// back is left out: it was not tried), and it still unwraps to libp2p's error.
type dialError struct {
	kind failKind
	// detail is the message: "connection refused at /ip4/…/tcp/4001".
	detail string
	// refusedAt are the addresses that refused the connection.
	refusedAt []string
	err       error
}

func (e *dialError) Error() string { return e.detail }
func (e *dialError) Unwrap() error { return e.err }

// reason says in words why the peer is not connected.
func (e *dialError) reason() string {
	switch e.kind {
	case failNoAddrs:
		return "no known address (none configured, none discovered yet)"
	case failRefused:
		if len(e.refusedAt) > 0 {
			return "refuses connections (nothing listens at " + strings.Join(e.refusedAt, ", ") + ")"
		}
		return "refuses connections (" + e.detail + ")"
	case failUnreachable:
		return "unreachable (" + e.detail + ")"
	case failClosesAtOnce:
		return reasonClosesAtOnce
	case failDropped:
		return "its connections close within seconds of opening (a network that drops them, or a peer restarting)"
	}
	return "cannot connect (" + e.detail + ")"
}

// errClosesAtOnce is the failure of a peer whose last connection closed
// within seconds of being opened.
var errClosesAtOnce = &dialError{kind: failClosesAtOnce, detail: "the peer " + reasonClosesAtOnce}

// errDroppedSoon is the failure of a peer whose last connection closed
// within seconds of being opened, after identify completed on it.
var errDroppedSoon = &dialError{kind: failDropped, detail: "the connection closed within seconds of opening"}

// kindOf returns the class of err, a failed dial.
func kindOf(err error) failKind {
	var de *dialError
	if errors.As(err, &de) {
		return de.kind
	}
	if err == nil {
		return failNone
	}
	return failOther
}

// ClosesAtOnce reports whether err is the failure of a peer whose last
// connection closed before the libp2p handshake's identify completed (its
// gater refusing us, most often: it may not have our peer card yet). One
// such close is weak evidence — a network that drops a fresh connection
// looks the same — so a caller judging a peer gone should see it persist.
func ClosesAtOnce(err error) bool { return kindOf(err) == failClosesAtOnce }

// FailureClass names the class of a failed dial in a few words without an
// address ("connection refused", "no answer"): what a session's abort may
// tell other organizations about a peer it lost; the error itself, with the
// addresses tried, is for this organization's log.
func FailureClass(err error) string {
	switch kindOf(err) {
	case failNone:
		return "no error"
	case failNoAddrs:
		return "no known address"
	case failRefused:
		return "connection refused"
	case failUnreachable:
		return "no answer"
	case failClosesAtOnce:
		return "it closes our connections at once"
	case failDropped:
		return "its connections close within seconds"
	}
	return "cannot connect"
}

// reasonOf says in words why a dial that failed with err did not connect.
func reasonOf(err error) string {
	var de *dialError
	if errors.As(err, &de) {
		return de.reason()
	}
	return "cannot connect (" + err.Error() + ")"
}

// explainDial rewrites libp2p's error for a failed dial for the operator.
// An address the host's dial policy held back (QUIC, while TCP is still
// given its chance: dialAddrAllowed) was not tried, and libp2p reports it as
// "gater disallows connection to peer", which reads like an access refusal:
// it is left out. Each other address is listed with its cause in plain words
// ("connection refused", "no answer"), and the whole is classed (refused,
// unreachable, other). An error that is not a libp2p dial error is returned
// classed as other, with its own message.
func explainDial(err error) error {
	if err == nil {
		return nil
	}
	var de *swarm.DialError
	if !errors.As(err, &de) {
		kind := failOther
		if isNoAnswer(err) {
			kind = failUnreachable
		}
		return &dialError{kind: kind, detail: err.Error(), err: err}
	}
	var parts, refused []string
	kinds := map[failKind]bool{}
	for _, te := range de.DialErrors {
		if errors.Is(te.Cause, swarm.ErrGaterDisallowedConnection) {
			continue // held back by our own dial policy: not tried
		}
		k, words := classifyCause(te.Cause)
		kinds[k] = true
		if k == failRefused {
			refused = append(refused, te.Address.String())
		}
		parts = append(parts, fmt.Sprintf("%s at %s", words, te.Address))
	}
	if de.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d more addresses", de.Skipped))
	}
	kind := failOther
	switch {
	case len(parts) == 0:
		// Nothing was tried at any address: the dial as a whole failed.
		cause := de.Cause
		if cause == nil {
			cause = errors.New("no address could be dialed")
		}
		k, words := classifyCause(cause)
		return &dialError{kind: k, detail: words, err: err}
	case kinds[failRefused]:
		kind = failRefused
	case kinds[failUnreachable] && len(kinds) == 1:
		kind = failUnreachable
	}
	return &dialError{kind: kind, detail: strings.Join(parts, "; "), refusedAt: refused, err: err}
}

// classifyCause returns the class of the cause of one address's failed dial
// and the cause in words.
func classifyCause(err error) (failKind, string) {
	var mismatch sec.ErrPeerIDMismatch
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return failRefused, "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return failUnreachable, "no route to host"
	case errors.Is(err, syscall.ENETUNREACH):
		return failUnreachable, "network unreachable"
	case errors.As(err, &mismatch):
		return failOther, fmt.Sprintf("another node answers (peer ID %s, not %s)", shortID(mismatch.Actual), shortID(mismatch.Expected))
	case isNoAnswer(err):
		return failUnreachable, "no answer"
	}
	return failOther, err.Error()
}

// isNoAnswer reports whether err is a timeout: the peer's address did not
// answer.
func isNoAnswer(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) || os.IsTimeout(err) ||
		errors.As(err, &ne) && ne.Timeout()
}
