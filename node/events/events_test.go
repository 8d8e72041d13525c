package events

import (
	"testing"
	"time"
)

// TestHub: events are numbered in order, kept up to the ring's size, read
// from a cursor (with lost set once the cursor fell behind), and a reader
// waiting on the channel is woken by the next one.
func TestHub(t *testing.T) {
	h := New(3)
	for i := range 5 {
		h.Publish(KindPeer, map[string]int{"i": i})
	}
	if h.Last() != 5 {
		t.Fatalf("last %d, want 5", h.Last())
	}
	evs, lost, wake := h.Since(0)
	if !lost || len(evs) != 3 || evs[0].Seq != 3 || evs[2].Seq != 5 || string(evs[2].Data) != `{"i":4}` {
		t.Errorf("since 0: %+v lost %v; want events 3-5 and lost", evs, lost)
	}
	if evs, lost, _ := h.Since(2); lost || len(evs) != 3 {
		t.Errorf("since 2: %d events, lost %v; want 3, none lost", len(evs), lost)
	}
	if evs, _, _ := h.Since(5); len(evs) != 0 {
		t.Errorf("since 5: %d events, want none", len(evs))
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		h.Publish(KindReload, "r")
	}()
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("not woken by the next event")
	}
	var nilHub *Hub
	nilHub.Publish(KindPeer, 1) // dropped, no panic
}
