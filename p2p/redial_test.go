package p2p

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// TestOneSidedPeerCardBacksOff is the onboarding day: node0 lists node1,
// node1 does not list node0 yet, so node1's gater closes every connection
// node0 makes right after the handshake. node0 must retry with backoff (no
// storm of connections, a handful of log lines), say why in its peer
// status, and connect within seconds once node1 adds node0's card. node1
// is not started, so that only node0's dialer can make the connection.
func TestOneSidedPeerCardBacksOff(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 10 s")
	}
	rec := &recordingHandler{}
	tn := newTestNet(t, 2, func(i int, cfg *Config) {
		cfg.DialBackoffMin, cfg.DialBackoffMax = 0, 0 // the defaults: 1 s to 1 min
		cfg.PingInterval = 0
		if i == 0 {
			cfg.Logger = slog.New(rec)
		} else {
			cfg.Peers = nil
		}
	})
	var conns, drops atomic.Int64
	tn.hosts[0].Notify(func(peer.ID) { conns.Add(1) }, func(peer.ID) { drops.Add(1) })
	tn.hosts[0].Start(t.Context())

	const oneSided = 10 * time.Second
	time.Sleep(oneSided)
	lines, loud := rec.countAtLeast(slog.LevelDebug), rec.countAtLeast(slog.LevelInfo)
	t.Logf("one-sided for %v: %d connections closed at once, %d log lines (%d at info or above)", oneSided, drops.Load(), lines, loud)
	if lines >= 50 {
		t.Errorf("%d log lines in %v, want fewer than 50", lines, oneSided)
	}
	if loud > 5 {
		t.Errorf("%d log lines at info or above, want a few (one a state change)", loud)
	}
	// Backoff from 1 s capped at closingBackoffMax: about 4 attempts in
	// 10 s (a dialer without backoff makes hundreds).
	if n := drops.Load(); n == 0 || n > 12 {
		t.Errorf("%d connections closed in %v, want a few (no storm, and some attempts)", n, oneSided)
	}
	st := tn.hosts[0].Peers()[0]
	if st.Connected || st.Reason != reasonClosesAtOnce {
		t.Errorf("peer status: connected %v, reason %q; want not connected, reason %q", st.Connected, st.Reason, reasonClosesAtOnce)
	}

	// A redial (a session's connection watcher, a link's resend loop)
	// does not dial a peer that closes our connections at once either.
	before := conns.Load()
	err := tn.hosts[0].Redial(t.Context(), tn.ids[1])
	if !errors.Is(err, errClosesAtOnce) || !strings.Contains(err.Error(), "closes our connections at once") {
		t.Errorf("Redial of a peer closing our connections: %v, want it to say so", err)
	}

	// node1 adds node0's card: node0's next attempt holds.
	if _, err := tn.hosts[1].SetBook([]Peer{{Name: tn.names[0], ID: tn.ids[0]}}); err != nil {
		t.Fatal(err)
	}
	added := time.Now()
	waitFor(t, "node0 to connect to node1", func() bool { return tn.hosts[0].Connected(tn.ids[1]) })
	took := time.Since(added)
	t.Logf("connected %v after node1 added the card; %d connections made before", took.Round(time.Millisecond), before)
	if took > 5*time.Second {
		t.Errorf("connected %v after the card was added, want within 5 s", took)
	}
	waitFor(t, "the connection to count as holding", func() bool {
		return rec.count(slog.LevelInfo, "address-book peer connected again") == 1
	})
	if st := tn.hosts[0].Peers()[0]; !st.Connected || st.Reason != "" || st.LastError != "" {
		t.Errorf("peer status after connecting: %+v", st)
	}
}

// TestRedialNamesTheRealCause: after a peer's daemon dies (kill -9: its
// ports close), the redial error that becomes a session's lost-peer reason
// names the real cause, "connection refused", and not the QUIC address our
// dial policy held back ("gater disallows connection to peer").
func TestRedialNamesTheRealCause(t *testing.T) {
	quic, err := multiaddr.NewMultiaddr("/ip4/127.0.0.1/udp/0/quic-v1")
	if err != nil {
		t.Fatal(err)
	}
	tn := newTestNet(t, 2, func(i int, cfg *Config) {
		cfg.ListenAddrs = append(cfg.ListenAddrs, quic)
	})
	tn.connectAll(t)
	if n := len(tn.hosts[0].LibP2P().Peerstore().Addrs(tn.ids[1])); n < 2 {
		t.Fatalf("node0 knows %d addresses of node1, want its TCP and QUIC ones", n)
	}
	if err := tn.hosts[1].Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node0 to lose node1", func() bool { return !tn.hosts[0].Connected(tn.ids[1]) })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err = tn.hosts[0].Redial(ctx, tn.ids[1])
	if err == nil {
		t.Fatal("redialing a closed host succeeded")
	}
	msg := err.Error()
	t.Logf("redial error: %s", msg)
	if !strings.Contains(msg, "connection refused at /ip4/127.0.0.1/tcp/") || strings.Contains(msg, "gater") || strings.Contains(msg, "quic") {
		t.Errorf("redial error %q: want the TCP address's connection refused, and nothing of the held-back QUIC address", msg)
	}
	if kindOf(err) != failRefused {
		t.Errorf("redial error classed %v, want refused", kindOf(err))
	}
}

// TestDroppedConnectionIsNotRefusal: a connection that identify completed
// on and that the peer then closes (a network that drops connections, a
// peer restarting) is not taken for a gater's refusal: a redial still
// dials, and the peer is not said to lack our card.
func TestDroppedConnectionIsNotRefusal(t *testing.T) {
	tn := newTestNet(t, 2, nil) // not started: only the test dials
	tn.connectAll(t)
	// The host learns of identify from the event bus, after the peerstore
	// holds the peer's agent: wait for the host's own record, which a
	// connection's end is judged by.
	waitFor(t, "identify to complete", func() bool {
		return tn.hosts[0].book.Load().states[tn.ids[1]].identifiedAgain()
	})
	for range 3 {
		if err := tn.hosts[1].LibP2P().Network().ClosePeer(tn.ids[0]); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "node0 to see the connection close", func() bool { return !tn.hosts[0].Connected(tn.ids[1]) })
		_, _, atOnce := tn.hosts[0].book.Load().states[tn.ids[1]].lastEnd()
		if atOnce {
			t.Fatal("a connection closed after identify was taken for a refusal")
		}
		if err := tn.hosts[0].Redial(t.Context(), tn.ids[1]); err != nil {
			t.Fatalf("redial: %v", err)
		}
		waitFor(t, "identify to complete again", func() bool {
			return tn.hosts[0].book.Load().states[tn.ids[1]].identifiedAgain()
		})
	}
}

// identifiedAgain reports whether identify completed on the peer's
// current connection.
func (st *peerState) identifiedAgain() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.identified
}
