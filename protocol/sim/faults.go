package sim

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// FaultKind names what a Fault does.
type FaultKind uint8

// The kinds of fault. Message faults happen on the wire, below the link
// layer the daemon runs (p2p's Messenger), and the simulator models what
// that layer makes of them (see LinkModel): the role sees only a later
// delivery, in order and exactly once, or the session's abort when the link
// gives up. Tamper and Crash reach the roles themselves.
const (
	// Drop loses a frame on the wire Times times in a row: each loss
	// costs LinkModel.ResendAfter before the frame is resent; a frame lost
	// LinkModel.MaxLosses times makes the link give up.
	Drop FaultKind = iota + 1
	// Duplicate delivers a frame twice on the wire; the receiver drops the
	// copy by its sequence number.
	Duplicate
	// Delay holds a frame on the wire for Delay more.
	Delay
	// Reorder holds a frame on the wire for Delay more, so that the frames
	// sent after it on its link arrive first; the receiver holds those back
	// until the gap fills.
	Reorder
	// Corrupt flips bytes of a frame on the wire. The transport is
	// authenticated (Noise or TLS 1.3), so the frame fails its check, the
	// connection is closed, and the link resends it: a loss.
	Corrupt
	// Tamper flips one byte of a message's body before its sender's
	// transport seals it: a faulty or malicious peer. The frame arrives
	// authenticated, and the role must reject it, or live with it as the
	// papers' threat model allows, but never panic or hang.
	Tamper
	// Crash stops a party's daemon at virtual time At: its role receives
	// no more calls, its session there is lost, and its peers abort
	// LinkModel.PeerTimeout later (the lifecycle's heartbeats stop).
	Crash
	// Restart stops a party's daemon at virtual time At and starts it
	// again Down later, as a crash followed by a restart does (the
	// process killed, the machine rebooted; a clean stop is not this
	// fault, see below). It models what node/ does:
	//
	//   - The session's state lived in the stopped process only: the
	//     restarted daemon does not run the session again. Its role gets
	//     no more calls, and every message to it from At on is lost —
	//     while it is down nobody receives it, and once it is back its
	//     daemon drops a role frame of a session it does not run (node's
	//     rejectRoleFrame, node/sessions/inbound.go: "role frame for a session that is
	//     not active here").
	//   - At start the daemon records every session its last run left
	//     open as aborted, "NAME restarted while the session was open"
	//     (Node.recoverSessions and crashReason, node/daemon.go). That is the
	//     restarted party's own end (AbortError.Ends).
	//   - It tells nobody by itself; it answers. The next control frame
	//     of the session it receives — a peer's heartbeat, sent every
	//     session.heartbeat_interval (LinkModel.HeartbeatInterval) by the
	//     initiator to each participant and by each participant to the
	//     initiator — is answered with an Abort carrying that reason
	//     (Runtime.answerEnded, node/sessions/controlsender.go; lifecycle.AnswerEnded), and the
	//     initiator relays it to the other participants. The control
	//     link is a p2p Messenger link, which a restarted receiver joins
	//     afresh (p2p's inLink.join), so the heartbeats reach it: one sent
	//     while it was down is resent as soon as it is back (p2p's
	//     resendLoop, backoff at most 1 s), otherwise the next one goes
	//     out within HeartbeatInterval. So the peers abort with the
	//     restart as their reason between about a second and
	//     HeartbeatInterval after the daemon is back, plus a round trip;
	//     the simulator takes the latest moment, back + HeartbeatInterval
	//     + 2 × latency, since it models neither the heartbeats' phase
	//     nor the resends of control frames — unless
	//     session.peer_timeout ran out first (LinkModel.PeerTimeout after
	//     At), when they abort for its silence, as after a Crash.
	//
	// The peers' first word of the stop is taken to be that answer: the
	// machine is down or cut off while the daemon is, so their redials
	// get no answer (node's peerDisconnected, node/sessions/watch.go, then waits for
	// the peer timeout). Two other stops end the session sooner, and are
	// not this fault: a daemon killed on a machine that stays up refuses
	// the redial, and its peers abort within seconds ("connection to
	// NAME closed; redial failed: …"); a daemon stopped cleanly (SIGTERM,
	// systemctl restart) aborts its sessions first and tells its peers
	// ("NAME is shutting down", Node.Close).
	//
	// As with Crash, a party whose role had finished before At is not
	// affected: the simulator does not model the lifecycle's Done and
	// Complete that follow the roles' end. Nor is a party that a Crash or
	// an earlier Restart stopped already: the simulator does not model a
	// daemon that goes down twice.
	Restart
)

var faultNames = [...]string{Drop: "drop", Duplicate: "dup", Delay: "delay", Reorder: "reorder",
	Corrupt: "corrupt", Tamper: "tamper", Crash: "crash", Restart: "restart"}

// String returns the kind's name in a schedule.
func (k FaultKind) String() string {
	if int(k) < len(faultNames) && faultNames[k] != "" {
		return faultNames[k]
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// Fault is one fault of a schedule.
type Fault struct {
	Kind FaultKind
	// Msg is the message a message fault strikes: its index, from 0, in
	// the order the network queues messages (a topic message once per
	// recipient, as Options.OnMessage sees them).
	Msg int64
	// Times is how many times in a row a Drop loses the frame (at least 1).
	Times int
	// Delay is the extra wire time of a Delay or Reorder.
	Delay time.Duration
	// Byte is the offset (modulo the body's length) of the byte a Tamper
	// flips; Mask, non-zero, is what it is XORed with.
	Byte int
	Mask byte
	// Party and At are the party a Crash or Restart stops and when
	// (virtual time since the start); Down is how long a Restart's
	// daemon stays down.
	Party protocol.Party
	At    time.Duration
	Down  time.Duration
}

// String formats the fault as ParseSchedule reads it, e.g. "drop@12x2",
// "delay@40+350ms", "tamper@7:3^0x10", "crash:comp[0]@1.5s",
// "restart:comp[0]@1.5s+2s".
func (f Fault) String() string {
	switch f.Kind {
	case Crash:
		return fmt.Sprintf("crash:%s@%v", f.Party, f.At)
	case Restart:
		return fmt.Sprintf("restart:%s@%v+%v", f.Party, f.At, f.Down)
	case Drop:
		return fmt.Sprintf("drop@%dx%d", f.Msg, max(f.Times, 1))
	case Delay, Reorder:
		return fmt.Sprintf("%s@%d+%v", f.Kind, f.Msg, f.Delay)
	case Tamper:
		return fmt.Sprintf("tamper@%d:%d^%#x", f.Msg, f.Byte, f.Mask)
	default:
		return fmt.Sprintf("%s@%d", f.Kind, f.Msg)
	}
}

// FormatSchedule formats a schedule as ParseSchedule reads it: the faults'
// Strings, separated by commas.
func FormatSchedule(fs []Fault) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.String()
	}
	return strings.Join(s, ",")
}

// ParseSchedule reads a schedule written by FormatSchedule.
func ParseSchedule(s string) ([]Fault, error) {
	var out []Fault
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		f, err := parseFault(item)
		if err != nil {
			return nil, fmt.Errorf("fault schedule: %q: %w", item, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFault(s string) (Fault, error) {
	if rest, ok := strings.CutPrefix(s, "crash:"); ok {
		p, at, ok := strings.Cut(rest, "@")
		if !ok {
			return Fault{}, fmt.Errorf("want crash:role[index]@time")
		}
		party, err := protocol.ParseParty(p)
		if err != nil {
			return Fault{}, err
		}
		d, err := time.ParseDuration(at)
		if err != nil {
			return Fault{}, err
		}
		return Fault{Kind: Crash, Party: party, At: d}, nil
	}
	if rest, ok := strings.CutPrefix(s, "restart:"); ok {
		p, times, ok := strings.Cut(rest, "@")
		if !ok {
			return Fault{}, fmt.Errorf("want restart:role[index]@time+down")
		}
		at, down, ok := strings.Cut(times, "+")
		if !ok {
			return Fault{}, fmt.Errorf("want restart:role[index]@time+down")
		}
		party, err := protocol.ParseParty(p)
		if err != nil {
			return Fault{}, err
		}
		f := Fault{Kind: Restart, Party: party}
		if f.At, err = time.ParseDuration(at); err != nil || f.At < 0 {
			return Fault{}, fmt.Errorf("restart time %q: want a non-negative duration", at)
		}
		if f.Down, err = time.ParseDuration(down); err != nil || f.Down < 0 {
			return Fault{}, fmt.Errorf("restart downtime %q: want a non-negative duration", down)
		}
		return f, nil
	}
	name, arg, ok := strings.Cut(s, "@")
	if !ok {
		return Fault{}, fmt.Errorf("want kind@message")
	}
	var f Fault
	for k, n := range faultNames {
		if n != "" && n == name && FaultKind(k) != Crash && FaultKind(k) != Restart {
			f.Kind = FaultKind(k)
		}
	}
	if f.Kind == 0 {
		return Fault{}, fmt.Errorf("unknown fault kind %q", name)
	}
	num := arg
	var err error
	switch f.Kind {
	case Drop:
		var times string
		if num, times, ok = strings.Cut(arg, "x"); ok {
			if f.Times, err = strconv.Atoi(times); err != nil || f.Times < 1 {
				return Fault{}, fmt.Errorf("drop count %q: want a whole number of at least 1", times)
			}
		} else {
			f.Times = 1
		}
	case Delay, Reorder:
		var d string
		if num, d, ok = strings.Cut(arg, "+"); !ok {
			return Fault{}, fmt.Errorf("want %s@message+duration", name)
		}
		if f.Delay, err = time.ParseDuration(d); err != nil || f.Delay < 0 {
			return Fault{}, fmt.Errorf("delay %q: want a non-negative duration", d)
		}
	case Tamper:
		var rest string
		if num, rest, ok = strings.Cut(arg, ":"); !ok {
			return Fault{}, fmt.Errorf("want tamper@message:byte^mask")
		}
		b, m, ok := strings.Cut(rest, "^")
		if !ok {
			return Fault{}, fmt.Errorf("want tamper@message:byte^mask")
		}
		if f.Byte, err = strconv.Atoi(b); err != nil || f.Byte < 0 {
			return Fault{}, fmt.Errorf("byte offset %q: want a whole number", b)
		}
		mask, err := strconv.ParseUint(m, 0, 8)
		if err != nil || mask == 0 {
			return Fault{}, fmt.Errorf("mask %q: want a non-zero byte", m)
		}
		f.Mask = byte(mask)
	}
	if f.Msg, err = strconv.ParseInt(num, 10, 64); err != nil || f.Msg < 0 {
		return Fault{}, fmt.Errorf("message index %q: want a whole number", num)
	}
	return f, nil
}

// Faults turns on fault injection in a simulation (Options.Faults). With
// none, the simulator's network is a plain first-in, first-out queue. With
// faults, links no longer share one latency, the queue is a heap, and the
// simulation runs on the sequential driver (Options.Workers is ignored):
// the parallel driver's batches rest on the first-in, first-out order.
type Faults struct {
	// Schedule lists the faults to inject; several may strike one message.
	Schedule []Fault
	// Link models the link layer between the wire and the roles; its zero
	// fields take the defaults of DefaultLinkModel.
	Link LinkModel
	// Deadline bounds the session's virtual time: a session still running
	// then ends with ErrDeadline, so that a schedule never hangs. Zero: no
	// bound (the simulator's stall check still applies).
	Deadline time.Duration
	// OnDeliver, when set, sees every message the link layer hands on to
	// a recipient's driver, with the message's sequence number on its link
	// (from 1 per sender and recipient, in the order sent): a checker of
	// the link's promise, exactly once and in order.
	OnDeliver func(seq uint64, m protocol.Message)
}

// ErrDeadline ends a simulation with faults that ran past Faults.Deadline.
var ErrDeadline = errors.New("simulation ran past its virtual-time deadline")

// AbortError is how a simulated session with faults aborted: when, the
// reason its parties record, and what the restarted ones recorded.
type AbortError struct {
	// At is the virtual time the session aborted.
	At time.Duration
	// Reason is the abort's reason, as the parties that learn it from
	// their peers record it.
	Reason string
	// Ends holds the reason each restarted party's daemon recorded: its
	// own restart (Restart), whatever its peers learned. Every other
	// party records Reason.
	Ends map[protocol.Party]string
	// Finished holds when each role that finished returned its result.
	Finished map[protocol.Party]time.Duration
}

func (e *AbortError) Error() string {
	msg := fmt.Sprintf("session aborted at %v: %s", e.At, e.Reason)
	parties := make([]protocol.Party, 0, len(e.Ends))
	for p := range e.Ends {
		parties = append(parties, p)
	}
	sort.Slice(parties, func(i, j int) bool { return parties[i].String() < parties[j].String() })
	for _, p := range parties {
		if e.Ends[p] != e.Reason {
			msg += fmt.Sprintf("; %s recorded: %s", p, e.Ends[p])
		}
	}
	return msg
}
