package protocol

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"
)

// MemNetwork is an in-memory network of parties. Every message sent through one
// of its endpoints is queued with a delivery time (send time plus the link
// latency) and a sequence number, so the order of delivery is deterministic.
//
// It serves two drivers: the simulator pops events one by one with Next, in
// virtual time; concurrent drivers (tests of the daemon's runner) start Pump,
// which delivers every queued message to its endpoint's Incoming channel.
type MemNetwork struct {
	latency time.Duration

	mu        sync.Mutex // guards the fields below
	now       time.Time
	seq       uint64
	queue     eventQueue
	endpoints map[Party]*MemEndpoint
	parties   []Party
	wake      chan struct{}
	messages  int64
	bytes     int64
	observe   func(Message) // set before use; sees every message sent
}

// NewMemNetwork creates a network of the given parties whose every link has the
// given one-way latency. start is the virtual time the network begins at.
func NewMemNetwork(parties []Party, latency time.Duration, start time.Time) *MemNetwork {
	n := &MemNetwork{
		latency:   latency,
		now:       start,
		endpoints: map[Party]*MemEndpoint{},
		parties:   append([]Party(nil), parties...),
		wake:      make(chan struct{}, 1),
	}
	for _, p := range parties {
		n.endpoints[p] = &MemEndpoint{net: n, self: p, in: make(chan Message, 1024)}
	}
	return n
}

// Endpoint returns the transport of party p, or nil if p is not on the network.
func (n *MemNetwork) Endpoint(p Party) *MemEndpoint { return n.endpoints[p] }

// Now is the network's virtual time: the delivery time of the last event popped.
func (n *MemNetwork) Now() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.now
}

// Stats returns how many messages and body bytes were sent (a topic message
// counts once per recipient, as gossip would deliver it).
func (n *MemNetwork) Stats() (messages, bytes int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.messages, n.bytes
}

// Pending reports whether a message is waiting for delivery.
func (n *MemNetwork) Pending() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.queue) > 0
}

// NextAt returns the delivery time of the next queued message.
func (n *MemNetwork) NextAt() (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 {
		return time.Time{}, false
	}
	return n.queue[0].at, true
}

// Next pops the earliest queued message and advances virtual time to its
// delivery time.
func (n *MemNetwork) Next() (Message, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 {
		return Message{}, false
	}
	ev := heap.Pop(&n.queue).(event)
	if ev.at.After(n.now) {
		n.now = ev.at
	}
	return ev.msg, true
}

// Advance moves virtual time forward to t (never backward).
func (n *MemNetwork) Advance(t time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t.After(n.now) {
		n.now = t
	}
}

// Pump delivers queued messages to the endpoints' Incoming channels, in queue
// order and without waiting for virtual time, until ctx ends.
func (n *MemNetwork) Pump(ctx context.Context) {
	for {
		for {
			m, ok := n.Next()
			if !ok {
				break
			}
			select {
			case n.endpoints[m.To].in <- m:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-n.wake:
		case <-ctx.Done():
			return
		}
	}
}

func (n *MemNetwork) enqueue(m Message) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	heap.Push(&n.queue, event{at: n.now.Add(n.latency), seq: n.seq, msg: m})
	n.messages++
	n.bytes += int64(len(m.Body))
	if n.observe != nil {
		n.observe(m)
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// MemEndpoint is one party's Transport on a MemNetwork.
type MemEndpoint struct {
	net  *MemNetwork
	self Party
	in   chan Message
}

// Send queues m for delivery; a topic message is queued once for every other
// party, in the network's party order.
func (e *MemEndpoint) Send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.From = e.self
	if m.Topic {
		for _, p := range e.net.parties {
			if p != e.self {
				c := m
				c.To = p
				e.net.enqueue(c)
			}
		}
		return nil
	}
	if _, ok := e.net.endpoints[m.To]; !ok {
		return fmt.Errorf("sending to %s: no such party in this session", m.To)
	}
	e.net.enqueue(m)
	return nil
}

// Incoming yields messages delivered by Pump.
func (e *MemEndpoint) Incoming() <-chan Message { return e.in }

type event struct {
	at  time.Time
	seq uint64
	msg Message
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	ev := old[len(old)-1]
	*q = old[:len(old)-1]
	return ev
}

func (n *MemNetwork) hasParty(p Party) bool { _, ok := n.endpoints[p]; return ok }
