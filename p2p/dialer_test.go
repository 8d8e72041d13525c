package p2p

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/multiformats/go-multiaddr"
)

func allConnected(tn *testNet) bool {
	for i, h := range tn.hosts {
		for j, o := range tn.hosts {
			if i != j && !h.Connected(o.ID()) {
				return false
			}
		}
	}
	return true
}

func TestHostsConnectByThemselves(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	for _, h := range tn.hosts {
		h.Start(t.Context())
	}
	waitFor(t, "all three hosts to connect to each other", func() bool { return allConnected(tn) })
}

func TestHostReconnectsAfterRestart(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	for _, h := range tn.hosts {
		h.Start(t.Context())
	}
	waitFor(t, "the initial mesh", func() bool { return allConnected(tn) })

	// Take node1 down: the others notice and fail to redial it.
	old := tn.hosts[1]
	addrs := old.Addrs()
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node0 to record a dial error for node1", func() bool {
		st := tn.hosts[0].Peers()[0] // node1 is node0's first book entry
		return !st.Connected && st.LastError != ""
	})

	// Bring node1 back with the same key on the same address; it is not
	// started, so the others must redial it.
	tn.hosts[1] = tn.newHost(t, 1, addrs, nil)
	waitFor(t, "node0 and node2 to reconnect to the restarted node1", func() bool {
		return tn.hosts[0].Connected(tn.ids[1]) && tn.hosts[2].Connected(tn.ids[1])
	})
	if st := tn.hosts[0].Peers()[0]; st.LastError != "" {
		t.Errorf("LastError after reconnecting = %q", st.LastError)
	}
}

func TestDialerStopsWithContext(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	ctx, cancel := context.WithCancel(t.Context())
	tn.hosts[0].Start(ctx)
	tn.hosts[0].Start(ctx) // a second Start is a no-op
	waitFor(t, "node0 to dial node1", func() bool { return tn.hosts[0].Connected(tn.ids[1]) })
	cancel()
	tn.hosts[0].wg.Wait() // the dialer goroutines end with ctx
}

// TestDialClearsLibp2pBackoff checks that one attempt of the address-book
// dialer reaches a peer that came back, although libp2p put the peer's
// address in its own dial backoff when the peer was down.
func TestDialClearsLibp2pBackoff(t *testing.T) {
	tn := newTestNet(t, 2, nil) // not started: only the test dials
	peer1 := Peer{Name: tn.names[1], ID: tn.ids[1]}
	addrs := tn.hosts[1].Addrs()
	if err := tn.hosts[1].Close(); err != nil {
		t.Fatal(err)
	}
	if err := tn.hosts[0].dial(t.Context(), peer1); err == nil {
		t.Fatal("dialing a closed host succeeded")
	}
	sw := tn.hosts[0].LibP2P().Network().(*swarm.Swarm)
	if !sw.Backoff().Backoff(tn.ids[1], addrs[0]) {
		t.Fatal("libp2p did not back off from the closed host's address; the test proves nothing")
	}

	tn.hosts[1] = tn.newHost(t, 1, addrs, nil)
	if err := tn.hosts[0].dial(t.Context(), peer1); err != nil {
		t.Fatalf("dialing the restarted host: %v", err)
	}
	if !tn.hosts[0].Connected(tn.ids[1]) {
		t.Error("not connected after a successful dial")
	}
}

// recordingHandler is a slog.Handler that keeps every record's level and
// message.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// count returns how many records of level have a message starting with msg.
func (h *recordingHandler) count(level slog.Level, msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.records {
		if r.Level == level && strings.HasPrefix(r.Message, msg) {
			n++
		}
	}
	return n
}

// countAtLeast returns how many records have level or above.
func (h *recordingHandler) countAtLeast(level slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.records {
		if r.Level >= level {
			n++
		}
	}
	return n
}

// TestUnreachablePeerLogging: a peer that cannot be reached is logged at
// info level at first (daemons started together miss each other for a
// moment), with one warning once it has been out of reach for warnAfter.
// The error names the real cause, connection refused, and leaves out the
// QUIC address our dial policy held back (libp2p's "gater disallows
// connection to peer"); the peer status says it in words.
func TestUnreachablePeerLogging(t *testing.T) {
	rec := &recordingHandler{}
	tn := newTestNet(t, 2, func(i int, cfg *Config) {
		if i == 0 {
			cfg.Logger = slog.New(rec)
		}
	})
	quic, err := multiaddr.NewMultiaddr("/ip4/127.0.0.1/udp/9/quic-v1")
	if err != nil {
		t.Fatal(err)
	}
	tn.hosts[0].LibP2P().Peerstore().AddAddr(tn.ids[1], quic, peerstore.PermanentAddrTTL)
	if err := tn.hosts[1].Close(); err != nil {
		t.Fatal(err)
	}
	err = tn.hosts[0].dial(t.Context(), Peer{Name: tn.names[1], ID: tn.ids[1]})
	if err == nil {
		t.Fatal("dialing a closed host succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "gater disallows") || strings.Contains(msg, "quic") || !strings.Contains(msg, "connection refused at /ip4/127.0.0.1/tcp/") {
		t.Errorf("dial error:\n%s\nwant the TCP address refused, and nothing of the held-back QUIC address", msg)
	}
	tn.hosts[0].warnAfter = 300 * time.Millisecond
	tn.hosts[0].Start(t.Context())
	waitFor(t, "the warning", func() bool { return rec.count(slog.LevelWarn, "address-book peer still not connected") > 0 })
	time.Sleep(300 * time.Millisecond) // more failures: still one warning
	if n := rec.count(slog.LevelInfo, "address-book peer not connected"); n != 1 {
		t.Errorf("%d info records of the first failure, want 1", n)
	}
	if n := rec.count(slog.LevelWarn, ""); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
	st := tn.hosts[0].Peers()[0]
	if want := "refuses connections (nothing listens at /ip4/127.0.0.1/tcp/"; !strings.HasPrefix(st.Reason, want) {
		t.Errorf("peer status reason %q, want it to start with %q", st.Reason, want)
	}
}
