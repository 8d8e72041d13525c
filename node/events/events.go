// Package events is the daemon's stream of what happens to it — a
// session's state and progress, a peer that connects or goes, a config
// reload — numbered, kept in a bounded ring for clients that reconnect, and
// waited for without polling. The control API serves it as Server-Sent
// Events (GET /v0/events).
package events

import (
	"encoding/json"
	"sync"
	"time"
)

// The kinds of events.
const (
	// KindSession: a session's record changed state (proposed, running,
	// completed, aborted); the data is its apitype.Session, without the
	// spec.
	KindSession = "session"
	// KindProgress: a running session's progress, at most once a second
	// per session; the data is {"id", "progress"}.
	KindProgress = "progress"
	// KindPeer: an address-book peer connected or lost its last
	// connection; the data is {"name", "peer_id", "connected"}.
	KindPeer = "peer"
	// KindReload: a config reload was tried; the data is its
	// apitype.ReloadStatus.
	KindReload = "reload"
)

// Event is one event: its number (from 1, in the order published), kind,
// time and data, as JSON.
type Event struct {
	Seq  uint64          `json:"seq"`
	Kind string          `json:"kind"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// Hub numbers the events published and keeps the last ones for readers.
// Its methods are safe for concurrent use, and a nil *Hub drops what it is
// given (a node built without one, in tests).
type Hub struct {
	mu   sync.Mutex
	ring []Event // the last len(ring) events, oldest first
	size int
	last uint64        // the number of the last event published
	wake chan struct{} // closed at the next publication
}

// New returns a hub that keeps the last size events.
func New(size int) *Hub {
	return &Hub{size: max(size, 1), wake: make(chan struct{})}
}

// Publish adds an event of kind with data v (marshalled to JSON) and wakes
// the readers. A v that does not marshal is dropped.
func (h *Hub) Publish(kind string, v any) {
	if h == nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last++
	h.ring = append(h.ring, Event{Seq: h.last, Kind: kind, At: time.Now().UTC(), Data: data})
	if len(h.ring) > h.size {
		h.ring = append(h.ring[:0], h.ring[len(h.ring)-h.size:]...)
	}
	close(h.wake)
	h.wake = make(chan struct{})
}

// Last returns the number of the last event published, 0 if none.
func (h *Hub) Last() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Since returns the events numbered after seq that the hub still keeps;
// lost, whether some after seq are no longer kept (a reader that fell
// behind the ring); and a channel closed when the next event is published.
func (h *Hub) Since(seq uint64) (evs []Event, lost bool, wake <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ring) > 0 && h.ring[0].Seq > seq+1 {
		lost = true
	}
	for _, e := range h.ring {
		if e.Seq > seq {
			evs = append(evs, e)
		}
	}
	return evs, lost, h.wake
}
