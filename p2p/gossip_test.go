package p2p

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// inbox records messages handed to a topic handler.
type inbox struct {
	mu   sync.Mutex
	msgs []string // "author-name:data"
}

func (b *inbox) handler(tn *testNet) func(peer.ID, []byte) {
	return func(from peer.ID, data []byte) {
		name := "?"
		if i := slices.Index(tn.ids, from); i >= 0 {
			name = tn.names[i]
		}
		b.mu.Lock()
		b.msgs = append(b.msgs, name+":"+string(data))
		b.mu.Unlock()
	}
}

func (b *inbox) has(m string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.msgs, m)
}

func (b *inbox) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.msgs)
}

func acceptAll(peer.ID, []byte) error { return nil }

func rejectBad(_ peer.ID, data []byte) error {
	if bytes.HasPrefix(data, []byte("bad")) {
		return errors.New("payload starts with bad")
	}
	return nil
}

// joinAll joins topic on every host with the given allowed sets and
// validators, and waits until each host sees the others subscribed.
func joinAll(t *testing.T, tn *testNet, gs []*Gossip, topic string, allowed [][]peer.ID, validators []func(peer.ID, []byte) error) ([]*Topic, []*inbox) {
	t.Helper()
	topics := make([]*Topic, len(gs))
	inboxes := make([]*inbox, len(gs))
	for i, g := range gs {
		inboxes[i] = &inbox{}
		tp, err := g.Join(topic, allowed[i], validators[i], inboxes[i].handler(tn))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tp.Close() })
		topics[i] = tp
	}
	waitFor(t, "every host to see the others subscribed to "+topic, func() bool {
		for _, tp := range topics {
			if len(tp.ListPeers()) != len(topics)-1 {
				return false
			}
		}
		return true
	})
	return topics, inboxes
}

func TestGossipParticipantsOnly(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	tn.connectAll(t)
	gs := make([]*Gossip, 3)
	for i, h := range tn.hosts {
		g, err := NewGossip(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		gs[i] = g
	}
	n0, n1, n2 := tn.ids[0], tn.ids[1], tn.ids[2]
	participants := []peer.ID{n0, n1}

	t.Run("non-participant is rejected", func(t *testing.T) {
		// node2 is misconfigured (or malicious): it believes it takes part.
		allowed := [][]peer.ID{participants, participants, {n0, n1, n2}}
		validators := []func(peer.ID, []byte) error{acceptAll, acceptAll, acceptAll}
		topics, inboxes := joinAll(t, tn, gs, "session-a", allowed, validators)

		if err := topics[2].Publish(t.Context(), []byte("from outsider")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "node0 and node1 to reject node2's message", func() bool {
			return topics[0].Stats().Rejected > 0 && topics[1].Stats().Rejected > 0
		})
		if err := topics[0].Publish(t.Context(), []byte("from node0")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "node1 and node2 to receive node0's message", func() bool {
			return inboxes[1].has("node0:from node0") && inboxes[2].has("node0:from node0")
		})
		for i := range 2 {
			for _, m := range inboxes[i].list() {
				if strings.HasPrefix(m, "node2:") {
					t.Errorf("node%d delivered a non-participant's message %q", i, m)
				}
			}
		}
		if got := inboxes[0].list(); len(got) != 0 {
			t.Errorf("node0 delivered %q; its own messages must be skipped", got)
		}
	})

	t.Run("correctly configured non-participant cannot publish", func(t *testing.T) {
		allowed := [][]peer.ID{participants, participants, participants}
		validators := []func(peer.ID, []byte) error{acceptAll, acceptAll, acceptAll}
		topics, inboxes := joinAll(t, tn, gs, "session-b", allowed, validators)
		if err := topics[2].Publish(t.Context(), []byte("x")); err == nil {
			t.Error("node2 published to a topic it does not take part in")
		}
		if err := topics[1].Publish(t.Context(), []byte("hello")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "node0 and node2 to receive node1's message", func() bool {
			return inboxes[0].has("node1:hello") && inboxes[2].has("node1:hello")
		})
	})

	t.Run("validator errors reject", func(t *testing.T) {
		all := []peer.ID{n0, n1, n2}
		allowed := [][]peer.ID{all, all, all}
		// node1 accepts anything (so it can publish "bad"); the others refuse it.
		validators := []func(peer.ID, []byte) error{rejectBad, acceptAll, rejectBad}
		topics, inboxes := joinAll(t, tn, gs, "session-c", allowed, validators)
		if err := topics[0].Publish(t.Context(), []byte("bad: own validator")); err == nil {
			t.Error("node0 published a message its own validator rejects")
		}
		if err := topics[1].Publish(t.Context(), []byte("bad payload")); err != nil {
			t.Fatal(err)
		}
		if err := topics[1].Publish(t.Context(), []byte("good payload")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "node0 and node2 to reject the bad one and receive the good one", func() bool {
			return topics[0].Stats().Rejected >= 2 && topics[2].Stats().Rejected > 0 &&
				inboxes[0].has("node1:good payload") && inboxes[2].has("node1:good payload")
		})
		for _, i := range []int{0, 2} {
			if inboxes[i].has("node1:bad payload") {
				t.Errorf("node%d delivered a message its validator rejects", i)
			}
		}
	})
}

func TestTopicCloseAndRejoin(t *testing.T) {
	tn := newTestNet(t, 1, nil)
	g, err := NewGossip(t.Context(), tn.hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	noop := func(peer.ID, []byte) {}
	tp, err := g.Join("t", tn.ids, acceptAll, noop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Join("t", tn.ids, acceptAll, noop); err == nil {
		t.Error("joined the same topic twice")
	}
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tp.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	tp2, err := g.Join("t", tn.ids, acceptAll, noop)
	if err != nil {
		t.Fatalf("rejoining after Close: %v", err)
	}
	tp2.Close()
}
