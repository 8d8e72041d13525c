package drive

import (
	"errors"
	"fmt"

	"github.com/bandit-node/bandit-node/protocol"
)

// Op names the call into a party in which it failed.
type Op uint8

// The calls into a party.
const (
	// OpBuild: the family's NewRole.
	OpBuild Op = iota + 1
	// OpStart: the role's Start.
	OpStart
	// OpStep: the role's Step, on a message from Error.From.
	OpStep
	// OpTick: the role's Tick.
	OpTick
	// OpActivate: an activation (protocol.Activated), or asking an Activated
	// role its rate.
	OpActivate
	// OpHalt: halting the role (protocol.Halter).
	OpHalt
	// OpEnvironment: the party's environment, answering a query, or
	// missing (ErrNoEnvironment).
	OpEnvironment
	// OpAnswer: the role, handed its environment's outcome.
	OpAnswer
	// OpSend: a message the role queued that its family may not send (a
	// topic message of a family that does not publish, an oversized
	// message of one that declares small messages).
	OpSend
	// OpCombine: the family's Combine, which runs for no party (Guard).
	OpCombine
	// OpEncode: encoding a result, the family's code too (Guard).
	OpEncode
	// OpRecycle: handing the role back what it sent (Recycler).
	OpRecycle
)

var opNames = [...]string{OpBuild: "build", OpStart: "start", OpStep: "step", OpTick: "tick", OpActivate: "activation",
	OpHalt: "halt", OpEnvironment: "environment", OpAnswer: "answer", OpSend: "send",
	OpCombine: "combining the reports", OpEncode: "encoding a result", OpRecycle: "recycling"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// ErrNoEnvironment is the error of a role that asked its environment when
// it has none (its family builds none for it, or the role is no
// protocol.Asker).
var ErrNoEnvironment = errors.New("the role asked its environment, but has none")

// Error is how a party failed: in which call, on whose message, and the
// role's own error or the value of a panic the guard recovered. Once a
// Party has failed, every further call returns the same Error: the role's
// state is not trusted afterwards.
type Error struct {
	// Party is the party that failed.
	Party protocol.Party
	// Op is the call it failed in.
	Op Op
	// From is the sender of the message the role refused (OpStep).
	From protocol.Party
	// Query is the query the environment failed to answer, or whose
	// outcome the role refused (OpEnvironment, OpAnswer); its slices are
	// not kept.
	Query protocol.QueryKind
	// Step is Query's step.
	Step int64
	// Err is the role's, the family's or the environment's error; nil
	// after a panic.
	Err error
	// Panic is the value of a panic recovered in the family's code, and
	// Stack the panicking goroutine's stack; nil without one.
	Panic any
	Stack []byte
}

// Error describes the failure for a developer or an operator of the
// party's own organization: it may quote the role's or the environment's
// error, which a daemon never sends to another organization.
func (e *Error) Error() string {
	if e.Panic != nil {
		if e.Party.Role == "" {
			return fmt.Sprintf("panic (%s): %v", e.Op, e.Panic)
		}
		return fmt.Sprintf("%s panicked (%s): %v", e.Party, e.Op, e.Panic)
	}
	switch e.Op {
	case OpStep:
		return fmt.Sprintf("%s rejected a message from %s: %v", e.Party, e.From, e.Err)
	case OpEnvironment:
		if errors.Is(e.Err, ErrNoEnvironment) {
			return fmt.Sprintf("%s: %v", e.Party, e.Err)
		}
		return fmt.Sprintf("%s's environment, %s query of step %d: %v", e.Party, e.Query, e.Step, e.Err)
	case OpAnswer:
		return fmt.Sprintf("%s rejected its environment's answer to the %s query of step %d: %v", e.Party, e.Query, e.Step, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Party, e.Op, e.Err)
}

// Unwrap returns the role's, family's or environment's error.
func (e *Error) Unwrap() error { return e.Err }
