package sim

import (
	"cmp"
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// LinkModel is the simulator's model of the daemon's link layer (p2p's
// Messenger, link.go and resend.go there) between the wire, where faults
// strike, and the roles. A sender numbers the frames of each link (one
// sender, one recipient), keeps each until it is acknowledged, and resends
// what a lost connection took; the receiver hands each frame on once, in
// order, and drops the copies a resend brings twice; the transport is
// authenticated, so a frame altered on the wire is refused like a lost one.
// So a frame lost, duplicated, delayed, reordered or corrupted on the wire
// reaches its role later, in order and exactly once — unless the link gives
// up on it, and the session aborts naming the two parties.
type LinkModel struct {
	// ResendAfter is what one loss of a frame costs before its resend
	// arrives: the messenger resends as soon as it finds the stream lost,
	// with backoff up to p2p's resendBackoffMax (1s).
	ResendAfter time.Duration
	// MaxLosses is how many losses in a row of one frame make the link
	// give up: p2p's maxFruitless, streams in a row that ended, their
	// connection still open, without the frame acknowledged (a Drop here
	// is such a stream; streams that end with their connection do not
	// count in p2p, and only GiveUpAfter bounds them).
	MaxLosses int
	// GiveUpAfter bounds how long a frame may take, resends included,
	// before the link gives up: p2p.DefaultResendTimeout.
	GiveUpAfter time.Duration
	// PeerTimeout is how long after a party's daemon crashes its peers
	// abort the session: the daemon's session.peer_timeout, after which a
	// peer whose heartbeats stopped is judged gone.
	PeerTimeout time.Duration
	// HeartbeatInterval is how often a running session's organizations
	// tell each other they are alive: the daemon's
	// session.heartbeat_interval. A restarted daemon answers the first
	// heartbeat of a session it no longer runs with an Abort (Restart).
	HeartbeatInterval time.Duration
	// KeepDuplicates turns the receiver's de-duplication off: a broken link
	// layer that hands a duplicated frame on twice. Only for testing that
	// a checker (Faults.OnDeliver, the schedule explorer) catches it.
	KeepDuplicates bool
	// KeepRoleAcrossRestart turns the Restart fault off: a broken model
	// in which a restarted daemon goes on with its session as if it had
	// kept the role's state. Only for testing that the schedule explorer
	// catches it.
	KeepRoleAcrossRestart bool
}

// DefaultLinkModel returns the link model of a daemon with default settings.
func DefaultLinkModel() LinkModel {
	return LinkModel{ResendAfter: time.Second, MaxLosses: 5, GiveUpAfter: 2 * time.Minute, PeerTimeout: 30 * time.Second,
		HeartbeatInterval: 5 * time.Second}
}

// withDefaults fills in l's zero fields.
func (l LinkModel) withDefaults() LinkModel {
	d := DefaultLinkModel()
	if l.ResendAfter <= 0 {
		l.ResendAfter = d.ResendAfter
	}
	if l.MaxLosses <= 0 {
		l.MaxLosses = d.MaxLosses
	}
	if l.GiveUpAfter <= 0 {
		l.GiveUpAfter = d.GiveUpAfter
	}
	if l.PeerTimeout <= 0 {
		l.PeerTimeout = d.PeerTimeout
	}
	if l.HeartbeatInterval <= 0 {
		l.HeartbeatInterval = d.HeartbeatInterval
	}
	return l
}

// faultNet is a Network's state with faults on: a heap of events by
// delivery time instead of the ring buffer (links no longer share one
// latency), the links' sequence numbers and the session's pending abort.
type faultNet struct {
	link      LinkModel
	byMsg     map[int64][]Fault // message faults by message index
	crashes   []crash
	deadline  time.Duration
	onDeliver func(seq uint64, m protocol.Message)

	queued int64 // messages queued so far: the index of the next
	order  uint64
	links  map[[2]int]*linkState // by sender and recipient (network indexes)
	events faultEvents

	aborting bool
	abortAt  time.Duration
	abortWhy string
	// ends holds what each restarted party's daemon recorded.
	ends map[protocol.Party]string
}

// crash is a Crash or Restart fault resolved to the party's network
// index.
type crash struct {
	idx     int
	party   protocol.Party
	at      time.Duration
	restart bool
	down    time.Duration // a restart's
	applied bool
}

// linkState is the receiving end of one link.
type linkState struct {
	seq    uint64        // frames sent on the link
	handed time.Duration // when the receiver handed on the last one
}

// faultEvent is a queued message with what the heap orders it by.
type faultEvent struct {
	event
	order uint64 // ties of delivery time go in the order queued
	seq   uint64
}

type faultEvents []faultEvent

func (h faultEvents) Len() int { return len(h) }
func (h faultEvents) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].order < h[j].order
}
func (h faultEvents) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *faultEvents) Push(x any)   { *h = append(*h, x.(faultEvent)) }
func (h *faultEvents) Pop() any {
	old := *h
	ev := old[len(old)-1]
	old[len(old)-1] = faultEvent{}
	*h = old[:len(old)-1]
	return ev
}

// injectFaults turns faults on; the network must be empty.
func (n *Network) injectFaults(f *Faults) error {
	fn := &faultNet{link: f.Link.withDefaults(), byMsg: map[int64][]Fault{}, deadline: f.Deadline,
		onDeliver: f.OnDeliver, links: map[[2]int]*linkState{}}
	for _, fault := range f.Schedule {
		switch fault.Kind {
		case Crash:
			e := n.Endpoint(fault.Party)
			if e == nil {
				return fmt.Errorf("fault %s: no such party in this session", fault)
			}
			fn.crashes = append(fn.crashes, crash{idx: e.idx, party: fault.Party, at: fault.At})
		case Restart:
			e := n.Endpoint(fault.Party)
			if e == nil {
				return fmt.Errorf("fault %s: no such party in this session", fault)
			}
			if fn.link.KeepRoleAcrossRestart {
				continue // the broken model: nothing is lost
			}
			fn.crashes = append(fn.crashes, crash{idx: e.idx, party: fault.Party, at: fault.At, restart: true, down: fault.Down})
		case Drop, Duplicate, Delay, Reorder, Corrupt, Tamper:
			fn.byMsg[fault.Msg] = append(fn.byMsg[fault.Msg], fault)
		default:
			return fmt.Errorf("fault %s: unknown kind", fault)
		}
	}
	// Due at once, they strike in the order of their times, then of the
	// schedule.
	slices.SortStableFunc(fn.crashes, func(a, b crash) int { return cmp.Compare(a.at, b.at) })
	n.mu.Lock()
	defer n.mu.Unlock()
	n.faults = fn
	return nil
}

// abort records that the session aborts at virtual time at for why, unless
// it aborts earlier already.
func (f *faultNet) abort(at time.Duration, why string) {
	if !f.aborting || at < f.abortAt {
		f.aborting, f.abortAt, f.abortWhy = true, at, why
	}
}

// push queues m, sent at virtual time sent by the party at network index
// from to the party at network index to, through the link model and the
// faults that strike it.
func (f *faultNet) push(n *Network, m protocol.Message, from, to int, sent time.Duration) {
	idx := f.queued
	f.queued++
	ls := f.links[[2]int{from, to}]
	if ls == nil {
		ls = &linkState{}
		f.links[[2]int{from, to}] = ls
	}
	ls.seq++
	arrive := sent + n.latency
	losses, dups := 0, 0
	for _, fault := range f.byMsg[idx] {
		switch fault.Kind {
		case Drop:
			losses += max(fault.Times, 1)
		case Corrupt:
			losses++
		case Duplicate:
			dups++
		case Delay, Reorder:
			arrive += fault.Delay
		case Tamper:
			if len(m.Body) > 0 && fault.Mask != 0 {
				b := append([]byte(nil), m.Body...) // the body may be shared (a topic message)
				b[fault.Byte%len(b)] ^= fault.Mask
				m.Body = b
			}
		}
	}
	arrive += time.Duration(losses) * f.link.ResendAfter
	switch {
	case losses >= f.link.MaxLosses:
		giveUp := sent + time.Duration(f.link.MaxLosses)*f.link.ResendAfter
		f.abort(giveUp, fmt.Sprintf("frames from %s to %s could not be delivered: %d streams in a row ended without %s acknowledging frame %d",
			m.From, m.To, f.link.MaxLosses, m.To, ls.seq))
		ls.handed = max(ls.handed, giveUp) // what follows waits behind the lost frame
		return
	case arrive-sent > f.link.GiveUpAfter:
		giveUp := sent + f.link.GiveUpAfter
		f.abort(giveUp, fmt.Sprintf("frames from %s to %s could not be delivered: %s could not be reached again within %v",
			m.From, m.To, m.To, f.link.GiveUpAfter))
		ls.handed = max(ls.handed, giveUp)
		return
	}
	// In order: a frame that arrives before one sent earlier on its link
	// waits for it.
	at := max(arrive, ls.handed)
	ls.handed = at
	f.order++
	heap.Push(&f.events, faultEvent{event: event{at: at, from: from, to: to, msg: m}, order: f.order, seq: ls.seq})
	if f.link.KeepDuplicates {
		for range dups {
			f.order++
			heap.Push(&f.events, faultEvent{event: event{at: arrive + n.latency, from: from, to: to, msg: m}, order: f.order, seq: ls.seq})
		}
	}
}

// peek returns the next event to hand on, if any comes before the abort:
// events to a crashed party after its crash are dropped on the way.
func (f *faultNet) peek() (*faultEvent, bool) {
	for len(f.events) > 0 {
		ev := &f.events[0]
		if f.crashedBy(ev.to, ev.at) {
			heap.Pop(&f.events)
			continue
		}
		if f.aborting && ev.at >= f.abortAt {
			return nil, false
		}
		return ev, true
	}
	return nil, false
}

// pop removes the event peek returned and shows it to OnDeliver.
func (f *faultNet) pop() event {
	ev := heap.Pop(&f.events).(faultEvent)
	if f.onDeliver != nil {
		f.onDeliver(ev.seq, ev.msg)
	}
	return ev.event
}

// crashedBy reports whether the party at network index idx has crashed by
// virtual time at, or restarted (a restarted daemon drops the role frames
// of the session it no longer runs).
func (f *faultNet) crashedBy(idx int, at time.Duration) bool {
	for _, c := range f.crashes {
		if c.idx == idx && at >= c.at {
			return true
		}
	}
	return false
}

// faultsDue carries out what the faults make happen by virtual time now,
// before the driver's calls then: the crashes and restarts due (the
// party's role gets no more calls, unless it had finished; the peers of a
// crashed party abort PeerTimeout later, those of a restarted one when it
// answers their next heartbeat, see Restart), and the session's abort, if
// due, as an *AbortError to end with.
func (d *simDriver) faultsDue(now time.Duration) error {
	f := d.net.faults
	if f == nil {
		return nil
	}
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	for i := range f.crashes {
		c := &f.crashes[i]
		if c.applied || c.at > now {
			continue
		}
		c.applied = true
		s := d.byNet[c.idx]
		if s == nil || s.done {
			continue
		}
		s.done = true
		if !c.restart {
			f.abort(c.at+f.link.PeerTimeout, fmt.Sprintf("%s went silent (its daemon crashed at %v): no heartbeat for %v",
				c.party, c.at, f.link.PeerTimeout))
			continue
		}
		back := c.at + c.down
		restarted := fmt.Sprintf("%s restarted while the session was open (its daemon went down at %v and was back at %v)",
			c.party, c.at, back)
		if f.ends == nil {
			f.ends = map[protocol.Party]string{}
		}
		f.ends[c.party] = restarted
		answered := back + f.link.HeartbeatInterval + 2*d.net.latency
		if silent := c.at + f.link.PeerTimeout; silent < answered {
			f.abort(silent, fmt.Sprintf("%s went silent (its daemon went down at %v for %v): no heartbeat for %v",
				c.party, c.at, c.down, f.link.PeerTimeout))
		} else {
			f.abort(answered, restarted)
		}
	}
	switch {
	case f.aborting && f.abortAt <= now:
		d.net.now = max(d.net.now, f.abortAt)
		return &AbortError{At: f.abortAt, Reason: f.abortWhy, Ends: maps.Clone(f.ends), Finished: maps.Clone(d.finished)}
	case f.deadline > 0 && now > f.deadline:
		return fmt.Errorf("%w (%v)", ErrDeadline, f.deadline)
	}
	return nil
}

// faultsEnded is faultsDue for a session whose schedule of activations
// ended: an abort pending at any time is the session's end, since its
// parties would wait for it.
func (d *simDriver) faultsEnded() error {
	f := d.net.faults
	if f == nil {
		return nil
	}
	d.net.mu.Lock()
	at := f.abortAt
	aborting := f.aborting
	d.net.mu.Unlock()
	if !aborting {
		return nil
	}
	return d.faultsDue(at)
}

// nextFaulty is Next with faults on; n.mu is held.
func (n *Network) nextFaulty() (protocol.Message, bool) {
	if _, ok := n.faults.peek(); !ok {
		return protocol.Message{}, false
	}
	ev := n.faults.pop()
	n.now = max(n.now, ev.at)
	return ev.msg, true
}

// popFaulty is popUntil with faults on; n.mu is held.
func (n *Network) popFaulty(dst []event, limit time.Duration, bounded bool) []event {
	for {
		next, ok := n.faults.peek()
		if !ok || bounded && next.at > limit {
			return dst
		}
		ev := n.faults.pop()
		n.now = max(n.now, ev.at)
		ev.at = n.now
		dst = append(dst, ev)
	}
}
