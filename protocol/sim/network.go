package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// Network is an in-memory network of parties. Every message sent through one
// of its endpoints is queued with a delivery time (send time plus the link
// latency); messages are delivered by delivery time, and in the order sent
// when their delivery times are equal, so the order of delivery is
// deterministic.
//
// Every link has the same latency and virtual time never goes back, so
// delivery times never decrease in the order messages are sent: ordering by
// (delivery time, order sent) is first in, first out, and the queue is a
// ring buffer rather than a heap.
//
// The simulator pops its events one by one with Next, in virtual time, or a
// batch at a time (popUntil).
type Network struct {
	latency time.Duration

	mu        sync.Mutex // guards the fields below
	start     time.Time
	now       time.Duration // virtual time, since start
	queue     eventQueue
	endpoints []roleEndpoints // by role, in order of first appearance; fixed at creation
	parties   []protocol.Party
	messages  int64
	bytes     int64
	to        []int                  // sendBatchLocked's recipients, storage reused
	observe   func(protocol.Message) // set before use; sees every message sent

	// faults, when set (before use), replaces queue: a heap of events
	// through the link model (link.go). Nil keeps the ring buffer's
	// fast path.
	faults *faultNet
}

// NewNetwork creates a network of the given parties whose every link has the
// given one-way latency. start is the virtual time the network begins at.
func NewNetwork(parties []protocol.Party, latency time.Duration, start time.Time) *Network {
	n := &Network{
		latency: latency,
		start:   start,
		parties: append([]protocol.Party(nil), parties...),
	}
	for i, p := range parties {
		if p.Index < 0 {
			panic(fmt.Sprintf("sim: party %s has a negative index", p))
		}
		r := slices.IndexFunc(n.endpoints, func(r roleEndpoints) bool { return r.role == p.Role })
		if r < 0 {
			r = len(n.endpoints)
			n.endpoints = append(n.endpoints, roleEndpoints{role: p.Role})
		}
		eps := &n.endpoints[r].byIndex
		for len(*eps) <= p.Index {
			*eps = append(*eps, nil)
		}
		(*eps)[p.Index] = &Endpoint{net: n, self: p, idx: i}
	}
	return n
}

// roleEndpoints are the endpoints of one role's parties, by index.
type roleEndpoints struct {
	role    string
	byIndex []*Endpoint // nil where no party has that index
}

// Endpoint returns the endpoint of party p, or nil if p is not on the network.
// A session has a handful of roles, so a scan finds p's role faster than a map
// hashes the party.
func (n *Network) Endpoint(p protocol.Party) *Endpoint {
	for i := range n.endpoints {
		if r := &n.endpoints[i]; r.role == p.Role {
			if p.Index < 0 || p.Index >= len(r.byIndex) {
				return nil
			}
			return r.byIndex[p.Index]
		}
	}
	return nil
}

// Now is the network's virtual time: the delivery time of the last event popped.
func (n *Network) Now() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.start.Add(n.now)
}

// Stats returns how many messages and body bytes were sent (a topic message
// counts once per recipient, as gossip would deliver it).
func (n *Network) Stats() (messages, bytes int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.messages, n.bytes
}

// Pending reports whether a message is waiting for delivery.
func (n *Network) Pending() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.faults != nil {
		return len(n.faults.events) > 0
	}
	return n.queue.n > 0
}

// NextAt returns the delivery time of the next queued message.
func (n *Network) NextAt() (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.faults != nil {
		ev, ok := n.faults.peek()
		if !ok {
			return time.Time{}, false
		}
		return n.start.Add(ev.at), true
	}
	if n.queue.n == 0 {
		return time.Time{}, false
	}
	return n.start.Add(n.queue.peek().at), true
}

// Next pops the earliest queued message and advances virtual time to its
// delivery time.
func (n *Network) Next() (protocol.Message, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.faults != nil {
		return n.nextFaulty()
	}
	if n.queue.n == 0 {
		return protocol.Message{}, false
	}
	ev := n.queue.pop()
	if ev.at > n.now {
		n.now = ev.at
	}
	return ev.msg, true
}

// Advance moves virtual time forward to t (never backward).
func (n *Network) Advance(t time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if d := t.Sub(n.start); d > n.now {
		n.now = d
	}
}

func (n *Network) enqueue(m protocol.Message, from, to int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.enqueueLocked(m, from, to, n.now)
}

// enqueueLocked queues m, from the party at index from of the network's
// parties to the party at index to, as sent at virtual time sent; n.mu is
// held.
func (n *Network) enqueueLocked(m protocol.Message, from, to int, sent time.Duration) {
	if n.faults != nil {
		n.faults.push(n, m, from, to, sent)
	} else {
		n.queue.push(event{at: sent + n.latency, from: from, to: to, msg: m})
	}
	n.messages++
	n.bytes += int64(len(m.Body))
	if n.observe != nil {
		n.observe(m)
	}
}

// sendBatch queues the messages one party's handler of a message delivered at
// virtual time sent (since the start) produced, in order, under one lock: the
// simulator's path for a whole Ready batch. It does what Send does for each,
// except that the send time is given rather than the network's. It queues
// nothing if a message is addressed to a party not on the network, and
// returns that message's index; otherwise -1. from is the sender's index
// among the network's parties (Endpoint's idx).
func (n *Network) sendBatch(from int, ms []protocol.Message, sent time.Duration) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sendBatchLocked(from, ms, sent)
}

// sendBatchLocked is sendBatch with n.mu held, for a driver that queues the
// batches of many handlers under one lock.
func (n *Network) sendBatchLocked(from int, ms []protocol.Message, sent time.Duration) int {
	self := n.parties[from]
	if len(ms) == 1 && !ms[0].Topic {
		// Most batches: one message, its recipient looked up once.
		e := n.Endpoint(ms[0].To)
		if e == nil {
			return 0
		}
		m := ms[0]
		m.From = self
		n.enqueueLocked(m, from, e.idx, sent)
		return -1
	}
	// Every recipient looked up once, before anything is queued.
	n.to = n.to[:0]
	for i, m := range ms {
		to := -1
		if !m.Topic {
			e := n.Endpoint(m.To)
			if e == nil {
				return i
			}
			to = e.idx
		}
		n.to = append(n.to, to)
	}
	for i, m := range ms {
		m.From = self
		if m.Topic {
			for j, p := range n.parties {
				if j != from {
					c := m
					c.To = p
					n.enqueueLocked(c, from, j, sent)
				}
			}
			continue
		}
		n.enqueueLocked(m, from, n.to[i], sent)
	}
	return -1
}

// popUntil appends to dst, in order, every queued event deliverable by limit
// (every queued event when bounded is false) and advances virtual time to the
// last one's delivery time: one lock for what Next would pop one by one. Each
// event's at is set to the virtual time Next would have left on popping it.
func (n *Network) popUntil(dst []event, limit time.Duration, bounded bool) []event {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.faults != nil {
		return n.popFaulty(dst, limit, bounded)
	}
	for n.queue.n > 0 && (!bounded || n.queue.peek().at <= limit) {
		ev := n.queue.pop()
		if ev.at > n.now {
			n.now = ev.at
		}
		ev.at = n.now // the virtual time Next would leave
		dst = append(dst, ev)
	}
	return dst
}

// elapsed is Now as a duration since the start.
func (n *Network) elapsed() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.now
}

// Endpoint is where one party of a Network sends from.
type Endpoint struct {
	net  *Network
	self protocol.Party
	idx  int // self's index in net.parties
}

// Send queues m for delivery; a topic message is queued once for every other
// party, in the network's party order.
func (e *Endpoint) Send(ctx context.Context, m protocol.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.From = e.self
	if m.Topic {
		for j, p := range e.net.parties {
			if p != e.self {
				c := m
				c.To = p
				e.net.enqueue(c, e.idx, j)
			}
		}
		return nil
	}
	to := e.net.Endpoint(m.To)
	if to == nil {
		return fmt.Errorf("sending to %s: no such party in this session", m.To)
	}
	e.net.enqueue(m, e.idx, to.idx)
	return nil
}

// event is a queued message and its delivery time (since the network's start).
type event struct {
	at       time.Duration
	from, to int // the sender's and the recipient's indexes in the network's parties
	msg      protocol.Message
}

// eventQueue is a growable ring buffer of events, oldest first.
type eventQueue struct {
	buf  []event // len(buf) is zero or a power of two
	head int     // index of the oldest event
	n    int     // number of events
}

func (q *eventQueue) push(ev event) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = ev
	q.n++
}

func (q *eventQueue) peek() *event { return &q.buf[q.head] }

func (q *eventQueue) pop() event {
	ev := q.buf[q.head]
	q.buf[q.head] = event{} // let the body be collected once delivered
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return ev
}

func (q *eventQueue) grow() {
	buf := make([]event, max(64, 2*len(q.buf)))
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}
