package node

import (
	"context"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/p2p"
)

// TestSessionThroughRelay runs a ping session between node2 and node3,
// which have no address of each other: node3 is behind a NAT, reserves at
// node1's relay service, and node2 reaches it through that relay. The
// control API's peers and the connection log say the connection is
// relayed.
func TestSessionThroughRelay(t *testing.T) {
	nodes := startNetwork(t, 3, func(i int, cfg *Config) {
		switch i {
		case 0:
			cfg.Relay.Service = true
		case 1, 2:
			if i == 2 {
				cfg.Relay.Via = "node1"
			}
			for j := range cfg.Peers {
				if cfg.Peers[j].Name != "node1" {
					cfg.Peers[j].Addrs = nil
					cfg.Peers[j].Relay = "node1"
				}
			}
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		at   int
		peer string
		want string
	}{
		{1, "node3", p2p.ConnRelayed},
		{2, "node2", p2p.ConnRelayed},
		{1, "node1", p2p.ConnDirect},
		{2, "node1", p2p.ConnDirect},
	} {
		peers, err := nodes[c.at].api.Peers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range peers {
			if p.Name == c.peer {
				found = true
				if p.Conn != c.want {
					t.Errorf("%s's peers: %s is %q, want %q", nodes[c.at].cfg.Node.Name, c.peer, p.Conn, c.want)
				}
			}
		}
		if !found {
			t.Errorf("%s's peers do not list %s", nodes[c.at].cfg.Node.Name, c.peer)
		}
	}
	// The session's control and role streams run on the relayed
	// connection (a connection relay v2 marks limited would refuse them),
	// which stays relayed: on loopback no hole punch upgrades it.
	id, err := nodes[1].StartSession(pingSpec(300, "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes[1:] {
		if got := waitEnded(t, tn, id, 60*time.Second); got.State != stateCompleted {
			t.Fatalf("the session through the relay ended %s on %s: %s", got.State, tn.cfg.Node.Name, got.Reason)
		}
	}
	if k := nodes[1].host.ConnKind(nodes[2].host.ID()); k != p2p.ConnRelayed {
		t.Errorf("node2's connection to node3 is %q after the session, want relayed", k)
	}
	testutil.WaitFor(t, 10*time.Second, "node2's log to say node3 connected relayed", func() bool {
		return len(nodes[1].logs.find("address-book peer connected", "conn", p2p.ConnRelayed)) > 0
	})
}
