package p2p

import (
	"context"
	"testing"

	"github.com/libp2p/go-libp2p/p2p/net/swarm"
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
