package sim

import (
	"errors"
	"fmt"
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
)

var faultNames = [...]string{Drop: "drop", Duplicate: "dup", Delay: "delay", Reorder: "reorder",
	Corrupt: "corrupt", Tamper: "tamper", Crash: "crash"}

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
	// Party and At are the party a Crash stops and when (virtual time
	// since the start).
	Party protocol.Party
	At    time.Duration
}

// String formats the fault as ParseSchedule reads it, e.g. "drop@12x2",
// "delay@40+350ms", "tamper@7:3^0x10", "crash:comp[0]@1.5s".
func (f Fault) String() string {
	switch f.Kind {
	case Crash:
		return fmt.Sprintf("crash:%s@%v", f.Party, f.At)
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
	name, arg, ok := strings.Cut(s, "@")
	if !ok {
		return Fault{}, fmt.Errorf("want kind@message")
	}
	var f Fault
	for k, n := range faultNames {
		if n != "" && n == name && FaultKind(k) != Crash {
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
