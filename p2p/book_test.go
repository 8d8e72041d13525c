package p2p

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// TestSetBookRemovesAndAddsPeers removes a connected peer from a running
// host's book (it is disconnected, its redials are refused, it leaves
// Peers) and adds it back (it is dialed and connects).
func TestSetBookRemovesAndAddsPeers(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	for _, h := range tn.hosts {
		h.Start(t.Context())
	}
	waitFor(t, "the initial mesh", func() bool { return allConnected(tn) })
	h := tn.hosts[0]
	full := h.Book()

	ch, err := h.SetBook(full[:1]) // node1 only
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Added) != 0 || len(ch.Removed) != 1 || ch.Removed[0].Name != "node2" {
		t.Fatalf("SetBook change = %+v, want node2 removed", ch)
	}
	if h.Known(tn.ids[2]) || h.Gater().Allowed(tn.ids[2]) {
		t.Error("node2 is still known or allowed after its removal")
	}
	waitFor(t, "node0 to lose node2", func() bool { return !h.Connected(tn.ids[2]) })
	// node2 still lists node0 and redials it: node0's gater refuses it.
	refused := h.Gater().Refused()
	waitFor(t, "node0 to refuse a redial from node2", func() bool { return h.Gater().Refused() > refused })
	if h.Connected(tn.ids[2]) {
		t.Error("node2 is connected to node0 after its removal")
	}
	if names := peerNames(h.Peers()); !slices.Equal(names, []string{"node1"}) {
		t.Errorf("Peers() after the removal = %v, want [node1]", names)
	}
	if !h.Connected(tn.ids[1]) {
		t.Error("node1, which stayed in the book, was disconnected")
	}

	ch, err = h.SetBook(full)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Added) != 1 || ch.Added[0].Name != "node2" || len(ch.Removed) != 0 {
		t.Fatalf("SetBook change = %+v, want node2 added", ch)
	}
	waitFor(t, "node0 and node2 to connect again", func() bool { return h.Connected(tn.ids[2]) })
}

// TestSetBookRefusesAnInvalidBook leaves the book as it was.
func TestSetBookRefusesAnInvalidBook(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	h := tn.hosts[0]
	before := h.Book()
	tests := []struct {
		name string
		book []Peer
		want string
	}{
		{"duplicate name", []Peer{{Name: "a", ID: tn.ids[1]}, {Name: "a", ID: tn.ids[2]}}, "both named"},
		{"duplicate ID", []Peer{{Name: "a", ID: tn.ids[1]}, {Name: "b", ID: tn.ids[1]}}, "same peer ID"},
		{"self", []Peer{{Name: "me", ID: tn.ids[0]}}, "own peer ID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.SetBook(tc.book)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SetBook: %v, want an error containing %q", err, tc.want)
			}
			if got := h.Book(); !slices.EqualFunc(got, before, func(a, b Peer) bool { return a.Name == b.Name && a.ID == b.ID }) {
				t.Errorf("the book changed: %v", got)
			}
		})
	}
}

// TestGaterSetAllowedConcurrently swaps the allowed set while the gater's
// callbacks run (go test -race finds unsynchronized access).
func TestGaterSetAllowedConcurrently(t *testing.T) {
	_, a := newKey(t)
	_, b := newKey(t)
	g := NewGater([]peer.ID{a}, nil)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			if i%2 == 0 {
				g.SetAllowed([]peer.ID{a, b})
			} else {
				g.SetAllowed([]peer.ID{a})
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 1000 {
			if !g.InterceptPeerDial(a) {
				t.Error("a, allowed in every set, was refused")
				return
			}
			g.InterceptPeerDial(b)
		}
	}()
	wg.Wait()
	g.SetAllowed([]peer.ID{b})
	if g.Allowed(a) || !g.Allowed(b) {
		t.Errorf("after SetAllowed([b]): Allowed(a) = %v, Allowed(b) = %v", g.Allowed(a), g.Allowed(b))
	}
}

func peerNames(ps []PeerStatus) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
