package p2p

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/multiformats/go-multiaddr"
)

// testLogWriter sends log output to t.Log until the test ends, and only with
// -v or P2P_TEST_LOG set, so libp2p goroutines that log late cannot fail a test.
type testLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() && os.Getenv("P2P_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	w := &testLogWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newKey(t testing.TB) (crypto.PrivKey, peer.ID) {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, id
}

func loopbackTCP(t testing.TB) []multiaddr.Multiaddr {
	t.Helper()
	a, err := multiaddr.NewMultiaddr("/ip4/127.0.0.1/tcp/0")
	if err != nil {
		t.Fatal(err)
	}
	return []multiaddr.Multiaddr{a}
}

// testNet is n hosts named node0..node{n-1}, each listing all the others.
type testNet struct {
	keys  []crypto.PrivKey
	ids   []peer.ID
	names []string
	hosts []*Host
}

// newTestNet starts n hosts on loopback TCP. Each address book lists every
// other host; addresses of hosts created later are added to the peerstores
// once all hosts listen. mod, if not nil, may adjust each config.
func newTestNet(t testing.TB, n int, mod func(i int, cfg *Config)) *testNet {
	t.Helper()
	tn := &testNet{}
	for i := range n {
		k, id := newKey(t)
		tn.keys = append(tn.keys, k)
		tn.ids = append(tn.ids, id)
		tn.names = append(tn.names, fmt.Sprintf("node%d", i))
	}
	for i := range n {
		tn.hosts = append(tn.hosts, tn.newHost(t, i, loopbackTCP(t), mod))
	}
	for i, h := range tn.hosts {
		for j, o := range tn.hosts {
			if i != j {
				h.LibP2P().Peerstore().AddAddrs(o.ID(), o.Addrs(), peerstore.PermanentAddrTTL)
			}
		}
	}
	return tn
}

// newHost creates host i listening on listen; its book lists the other hosts
// with the addresses of those that exist.
func (tn *testNet) newHost(t testing.TB, i int, listen []multiaddr.Multiaddr, mod func(i int, cfg *Config)) *Host {
	t.Helper()
	cfg := Config{
		Key:            tn.keys[i],
		ListenAddrs:    listen,
		Logger:         testLogger(t).With("node", tn.names[i]),
		DialBackoffMin: 20 * time.Millisecond,
		DialBackoffMax: 200 * time.Millisecond,
		PingInterval:   time.Second,
	}
	for j := range tn.keys {
		if j == i {
			continue
		}
		p := Peer{Name: tn.names[j], ID: tn.ids[j]}
		if j < len(tn.hosts) && tn.hosts[j] != nil {
			p.Addrs = tn.hosts[j].Addrs()
		}
		cfg.Peers = append(cfg.Peers, p)
	}
	if mod != nil {
		mod(i, &cfg)
	}
	h, err := NewHost(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// connectAll connects every pair of hosts directly, without the dialer.
func (tn *testNet) connectAll(t testing.TB) {
	t.Helper()
	for i, h := range tn.hosts {
		for j := i + 1; j < len(tn.hosts); j++ {
			o := tn.hosts[j]
			if err := h.LibP2P().Connect(t.Context(), peer.AddrInfo{ID: o.ID(), Addrs: o.Addrs()}); err != nil {
				t.Fatalf("connecting %s to %s: %v", tn.names[i], tn.names[j], err)
			}
		}
	}
}

// waitFor polls cond until it holds. The limit only keeps a broken test from
// hanging; tests assert no timing.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
