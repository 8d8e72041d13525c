package environment

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/bandit-node/bandit-node/protocol"
)

// Error is how an exec, http or replay environment fails: it names the
// environment (its label, such as "samba data_owner[3] of acme"), the
// query it was answering, what went wrong and, for a program, the last
// lines of its stderr. The session aborts with it.
type Error struct {
	// Label names the environment.
	Label string
	// Kind and Step are the query's; Kind is 0 for an error outside a
	// query (starting the program before the first one).
	Kind protocol.QueryKind
	Step int64
	// Err is what went wrong.
	Err error
	// Stderr is the end of the program's stderr (at most its last few
	// lines), "" for other sources or a program that wrote nothing.
	Stderr string
}

// Error reads "LABEL: KIND at step STEP: WHAT; its stderr ended with
// "…"".
func (e *Error) Error() string {
	s := e.Label + ": "
	if e.Kind != 0 {
		s += e.Kind.String() + " at step " + strconv.FormatInt(e.Step, 10) + ": "
	}
	s += e.Err.Error()
	if e.Stderr != "" {
		s += "; its stderr ended with " + strconv.Quote(e.Stderr)
	}
	return s
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// ErrClosed is the error of a query to an environment already closed.
var ErrClosed = errors.New("the environment is closed")

// ErrSimulated is what Config.New returns for source = "simulated": the
// family's own simulated environment applies, which this package does not
// build.
var ErrSimulated = errors.New(`source = "simulated": the family's own simulated environment applies`)

// queryError returns an Error for q (nil: outside a query).
func queryError(label string, q *protocol.Query, stderr string, err error) *Error {
	e := &Error{Label: label, Err: err, Stderr: stderr}
	if q != nil {
		e.Kind, e.Step = q.Kind, q.Step
	}
	return e
}

// excerpt quotes at most the first 200 bytes of b, for an error message.
func excerpt(b []byte) string {
	const n = 200
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + fmt.Sprintf(" (%d bytes in all)", len(b))
	}
	return strconv.Quote(string(b))
}
