package p2p

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

func TestNewHostValidation(t *testing.T) {
	key, self := newKey(t)
	_, a := newKey(t)
	_, b := newKey(t)
	addrOf := func(id peer.ID) multiaddr.Multiaddr {
		return multiaddr.StringCast("/ip4/127.0.0.1/tcp/4001/p2p/" + id.String())
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" means success
	}{
		{name: "valid", mod: func(*Config) {}},
		{name: "valid with /p2p/ suffix", mod: func(c *Config) { c.Peers[0].Addrs = []multiaddr.Multiaddr{addrOf(a)} }},
		{name: "nil key", mod: func(c *Config) { c.Key = nil }, want: "no identity key"},
		{name: "no listen addresses", mod: func(c *Config) { c.ListenAddrs = nil }, want: "no listen addresses"},
		{name: "self in book", mod: func(c *Config) { c.Peers[1].ID = self }, want: "own peer ID"},
		{name: "duplicate name", mod: func(c *Config) { c.Peers[1].Name = "alpha" }, want: `both named "alpha"`},
		{name: "duplicate ID", mod: func(c *Config) { c.Peers[1].ID = a }, want: "same peer ID"},
		{name: "empty name", mod: func(c *Config) { c.Peers[1].Name = "" }, want: "empty name"},
		{name: "empty ID", mod: func(c *Config) { c.Peers[1].ID = "" }, want: "invalid peer ID"},
		{name: "address of another peer", mod: func(c *Config) { c.Peers[0].Addrs = []multiaddr.Multiaddr{addrOf(b)} }, want: "names peer"},
		{name: "backoff min above max", mod: func(c *Config) { c.DialBackoffMin, c.DialBackoffMax = time.Minute, time.Second }, want: "dial backoff"},
		{name: "negative backoff", mod: func(c *Config) { c.DialBackoffMin = -time.Second }, want: "dial backoff"},
		{name: "negative ping interval", mod: func(c *Config) { c.PingInterval = -time.Second }, want: "ping interval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{
				Key:         key,
				ListenAddrs: loopbackTCP(t),
				Peers:       []Peer{{Name: "alpha", ID: a}, {Name: "beta", ID: b}},
			}
			tc.mod(&cfg)
			checkNewHost(t, cfg, tc.want)
		})
	}
}

func TestHostAccessors(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	h := tn.hosts[0]
	if h.ID() != tn.ids[0] {
		t.Errorf("ID = %s, want %s", h.ID(), tn.ids[0])
	}
	addrs := h.Addrs()
	if len(addrs) == 0 {
		t.Fatal("no listen addresses")
	}
	for _, a := range addrs {
		if port, err := a.ValueForProtocol(multiaddr.P_TCP); err != nil || port == "0" {
			t.Errorf("listen address %s: port not resolved (%v)", a, err)
		}
	}
	if got := h.PeerName(tn.ids[1]); got != "node1" {
		t.Errorf("PeerName(node1) = %q", got)
	}
	_, stranger := newKey(t)
	if got := h.PeerName(stranger); got == "" || strings.Contains(got, "node") {
		t.Errorf("PeerName(stranger) = %q, want a short ID", got)
	}
	if !h.Known(tn.ids[1]) || h.Known(stranger) {
		t.Error("Known disagrees with the address book")
	}
	if h.LibP2P() == nil {
		t.Error("LibP2P() is nil")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestHostPeersAndNotify(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	h := tn.hosts[0]
	var mu sync.Mutex
	events := map[peer.ID][]string{}
	h.Notify(func(id peer.ID) {
		mu.Lock()
		events[id] = append(events[id], "up")
		mu.Unlock()
	}, func(id peer.ID) {
		mu.Lock()
		events[id] = append(events[id], "down")
		mu.Unlock()
	})
	for _, o := range tn.hosts {
		o.Start(t.Context())
	}
	waitFor(t, "node0 to connect and measure latency to both peers", func() bool {
		for _, st := range h.Peers() {
			if !st.Connected || st.Latency == 0 {
				return false
			}
		}
		return true
	})
	ps := h.Peers()
	if len(ps) != 2 || ps[0].Name != "node1" || ps[1].Name != "node2" {
		t.Fatalf("Peers() = %+v, want node1 and node2 in book order", ps)
	}
	for _, st := range ps {
		if len(st.Addrs) == 0 {
			t.Errorf("%s: no addresses", st.Name)
		}
		if st.LastError != "" {
			t.Errorf("%s: LastError = %q after connecting", st.Name, st.LastError)
		}
	}
	tn.hosts[2].Close()
	waitFor(t, "node0 to see node2 go down", func() bool {
		mu.Lock()
		defer mu.Unlock()
		ev := events[tn.ids[2]]
		return len(ev) > 0 && ev[len(ev)-1] == "down"
	})
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(events[tn.ids[2]], ","); got != "up,down" {
		t.Errorf("node2 events = %s, want up,down", got)
	}
	if got := strings.Join(events[tn.ids[1]], ","); got != "up" {
		t.Errorf("node1 events = %s, want up", got)
	}
}

// checkNewHost builds a host of cfg: it must succeed when want is "", or
// fail with an error mentioning want.
func checkNewHost(t *testing.T, cfg Config, want string) {
	t.Helper()
	h, err := NewHost(cfg)
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
		return
	}
	if err == nil {
		h.Close()
		t.Fatalf("NewHost succeeded, want an error mentioning %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not mention %q", err, want)
	}
}
