package lifecycle

import (
	"fmt"
	"strings"

	"github.com/bandit-node/bandit-node/protocol"
)

// Org is an organization of the session: its index in Config.Names.
type Org int

// Kind is the kind of a control message.
//
// NOTE: a new kind needs a case in Describe and in the node's translation
// to and from the wire (node/sessions/control.go).
type Kind uint8

// The control messages between the initiator and a participant. Each is
// sent by one side only; a machine ignores a kind its side never receives.
const (
	// Propose asks a participant to take part (initiator → participant).
	// The spec travels with it; the machine does not look at it.
	Propose Kind = iota + 1
	// Accept answers Propose: the participant will play its parties
	// (participant → initiator). It is repeated until the session starts.
	Accept
	// Decline answers Propose: the participant will not take part, and why.
	Decline
	// Start tells a participant that every participant accepted.
	Start
	// Heartbeat keeps a running session alive while nothing else is sent
	// (both ways).
	Heartbeat
	// Progress reports a participant's summed progress.
	Progress
	// Done carries the reports of a participant's parties, all finished.
	// It is repeated until the session ends.
	Done
	// Complete tells a participant that the session has finished.
	Complete
	// Abort ends the session everywhere with one reason (both ways; the
	// initiator relays a participant's to every other participant).
	Abort
)

var kindNames = [...]string{Propose: "propose", Accept: "accept", Decline: "decline", Start: "start",
	Heartbeat: "heartbeat", Progress: "progress", Done: "done", Complete: "complete", Abort: "abort"}

// String is the kind's name in logs and transcripts.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// IsEnding reports whether k ends a session: a machine that has ended
// never answers one (two ended organizations would answer each other
// forever).
func (k Kind) IsEnding() bool { return k == Abort || k == Complete || k == Decline }

// Report is one party's report for the initiator.
type Report struct {
	Party protocol.Party
	Body  []byte
}

// Msg is one control message.
type Msg struct {
	Kind     Kind
	From, To Org
	// Reason is a Decline's or an Abort's.
	Reason string
	// Progress is a Progress message's.
	Progress protocol.Progress
	// Reports are a Done message's.
	Reports []Report
}

// Describe formats m for logs and golden transcripts, naming organizations
// by names.
func Describe(m Msg, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s→%s %s", orgName(m.From, names), orgName(m.To, names), m.Kind)
	switch m.Kind {
	case Decline, Abort:
		fmt.Fprintf(&b, " %q", m.Reason)
	case Progress:
		fmt.Fprintf(&b, " step=%d total=%d activity=%d", m.Progress.Step, m.Progress.Total, m.Progress.Activity)
	case Done:
		for _, r := range m.Reports {
			fmt.Fprintf(&b, " %s=%q", r.Party, r.Body)
		}
	}
	return b.String()
}

func orgName(o Org, names []string) string {
	if o >= 0 && int(o) < len(names) {
		return names[o]
	}
	return fmt.Sprintf("org(%d)", o)
}
