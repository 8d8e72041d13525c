package p2p

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// lockedBuffer is a bytes.Buffer safe for concurrent log writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestGaterDecisions(t *testing.T) {
	_, known := newKey(t)
	_, stranger := newKey(t)
	var logs lockedBuffer
	g := NewGater([]peer.ID{known}, slog.New(slog.NewTextHandler(&logs, nil)))

	tests := []struct {
		name string
		call func() bool
		want bool
	}{
		{"dial known", func() bool { return g.InterceptPeerDial(known) }, true},
		{"dial stranger", func() bool { return g.InterceptPeerDial(stranger) }, false},
		{"addr dial", func() bool { return g.InterceptAddrDial(known, nil) }, true},
		{"accept before handshake", func() bool { return g.InterceptAccept(nil) }, true},
		{"secured inbound known", func() bool { return g.InterceptSecured(network.DirInbound, known, nil) }, true},
		{"secured inbound stranger", func() bool { return g.InterceptSecured(network.DirInbound, stranger, nil) }, false},
		{"secured outbound stranger", func() bool { return g.InterceptSecured(network.DirOutbound, stranger, nil) }, false},
		{"upgraded", func() bool { ok, _ := g.InterceptUpgraded(nil); return ok }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.call(); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if got := g.Refused(); got != 3 {
		t.Errorf("Refused() = %d, want 3", got)
	}
	if n := strings.Count(logs.String(), stranger.String()); n != 1 {
		t.Errorf("stranger logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestGaterRemembersBoundedSet(t *testing.T) {
	g := NewGater(nil, nil)
	for range maxRememberedRefusals + 100 {
		_, id := newKey(t)
		g.InterceptPeerDial(id)
	}
	g.mu.Lock()
	n := len(g.logged)
	g.mu.Unlock()
	if n > maxRememberedRefusals {
		t.Errorf("gater remembers %d refused IDs, cap is %d", n, maxRememberedRefusals)
	}
	if got := g.Refused(); got != maxRememberedRefusals+100 {
		t.Errorf("Refused() = %d, want %d", got, maxRememberedRefusals+100)
	}
}

func TestGaterRefusesUnknownHost(t *testing.T) {
	// node0 and node1 list each other. The intruder has a fresh identity and
	// lists node0, but node0's book does not list it.
	tn := newTestNet(t, 2, nil)
	listener := tn.hosts[0]
	intruderKey, _ := newKey(t)
	intruder, err := NewHost(Config{
		Key:         intruderKey,
		ListenAddrs: loopbackTCP(t),
		Peers:       []Peer{{Name: "node0", ID: listener.ID(), Addrs: listener.Addrs()}},
		Logger:      testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { intruder.Close() })

	err = intruder.LibP2P().Connect(t.Context(), peer.AddrInfo{ID: listener.ID(), Addrs: listener.Addrs()})
	if err == nil {
		// The intruder's side may complete its handshake before node0
		// refuses; node0 must drop the connection regardless.
		waitFor(t, "node0 to drop the intruder", func() bool { return !intruder.Connected(listener.ID()) })
	}
	waitFor(t, "node0 to count the refusal", func() bool { return listener.Gater().Refused() > 0 })
	if listener.Connected(intruder.ID()) {
		t.Error("node0 is connected to the intruder")
	}

	// node0 refuses to dial the intruder too.
	err = listener.LibP2P().Connect(t.Context(), peer.AddrInfo{ID: intruder.ID(), Addrs: intruder.Addrs()})
	if err == nil {
		t.Error("node0 dialed a peer that is not in its address book")
	}

	// The listed peer connects.
	if err := tn.hosts[1].LibP2P().Connect(t.Context(), peer.AddrInfo{ID: listener.ID(), Addrs: listener.Addrs()}); err != nil {
		t.Fatalf("listed peer could not connect: %v", err)
	}
	if !listener.Connected(tn.ids[1]) && !tn.hosts[1].Connected(listener.ID()) {
		t.Error("listed peer is not connected")
	}
}

// connAddrs is a network.ConnMultiaddrs of a remote address.
type connAddrs struct{ remote multiaddr.Multiaddr }

func (c connAddrs) LocalMultiaddr() multiaddr.Multiaddr {
	return multiaddr.StringCast("/ip4/127.0.0.1/tcp/4001")
}
func (c connAddrs) RemoteMultiaddr() multiaddr.Multiaddr { return c.remote }

// TestGaterListsInboundRefusals: a peer refused on an inbound connection is
// listed once, with its first and last attempt, their count and its last
// address; a refused dial or outbound connection, or an admitted peer, is
// not; the list keeps the MaxListedRefusals most recent peers; a peer that
// joins the address book leaves it.
func TestGaterListsInboundRefusals(t *testing.T) {
	_, known := newKey(t)
	_, stranger := newKey(t)
	g := NewGater([]peer.ID{known}, nil)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	from := func(a string) connAddrs { return connAddrs{multiaddr.StringCast(a)} }
	g.InterceptSecured(network.DirInbound, known, from("/ip4/192.0.2.1/tcp/5000"))
	g.InterceptSecured(network.DirOutbound, stranger, from("/ip4/192.0.2.2/tcp/5000"))
	g.InterceptPeerDial(stranger)
	if r := g.Refusals(); len(r) != 0 {
		t.Fatalf("listed %v before any inbound refusal", r)
	}
	g.InterceptSecured(network.DirInbound, stranger, from("/ip4/192.0.2.2/tcp/5000"))
	g.InterceptSecured(network.DirInbound, stranger, from("/ip4/192.0.2.2/tcp/5001"))
	r := g.Refusals()
	if len(r) != 1 || r[0].ID != stranger || r[0].Count != 2 || !r[0].Last.Equal(r[0].First.Add(time.Second)) ||
		r[0].Addr.String() != "/ip4/192.0.2.2/tcp/5001" {
		t.Fatalf("refusals %+v, want the stranger once, twice, from its last address", r)
	}
	for range MaxListedRefusals {
		_, id := newKey(t)
		g.InterceptSecured(network.DirInbound, id, nil)
	}
	r = g.Refusals()
	if len(r) != MaxListedRefusals || slices.ContainsFunc(r, func(x Refusal) bool { return x.ID == stranger }) {
		t.Fatalf("%d listed (the stranger among them: %v), want %d without the stranger, seen longest ago",
			len(r), slices.ContainsFunc(r, func(x Refusal) bool { return x.ID == stranger }), MaxListedRefusals)
	}
	if !r[0].Last.After(r[len(r)-1].Last) {
		t.Errorf("not most recent first: %v … %v", r[0].Last, r[len(r)-1].Last)
	}
	g.SetAllowed([]peer.ID{known, r[0].ID})
	if got := g.Refusals(); len(got) != MaxListedRefusals-1 || slices.ContainsFunc(got, func(x Refusal) bool { return x.ID == r[0].ID }) {
		t.Errorf("a peer admitted is still listed among %d", len(got))
	}
}
