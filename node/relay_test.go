package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestSessionThroughRelay runs a ping session between node2 and node3,
// which have no address of each other: node3 is behind a NAT, reserves at
// node1's relay service, and node2 reaches it through that relay. The
// control API's peers and the connection log say the connection is
// relayed.
func TestSessionThroughRelay(t *testing.T) {
	nodes := startNetwork(t, 3, func(i int, cfg *config.Config) {
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

// TestSAMBAThroughRelay runs SAMBA with K = 2 where the controller, node2,
// and a data owner, node4, are behind NATs: they reserve at node1's relay,
// and every peer but node1 reaches them only through it, so the owner's
// messages to and from the controller cross the relay (the two NATed nodes
// reach each other only through it; the others' connections to them are
// the NATed nodes' own outbound dials or relayed). The data customer's
// reward equals the standard algorithm's from the same seed.
func TestSAMBAThroughRelay(t *testing.T) {
	means := []float64{0.6, 0.3}
	const budget, seed = 60, 7
	nated := map[string]bool{"node2": true, "node4": true}
	nodes := startNetwork(t, 5, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i == 0 {
			cfg.Relay.Service = true
		}
		if nated[cfg.Node.Name] {
			cfg.Relay.Via = "node1"
		}
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: means[i-3]}}
		}
		for j, p := range cfg.Peers {
			if !nated[p.Name] {
				continue
			}
			cfg.Peers[j].Addrs = nil // behind a NAT: nobody can dial it
			if i != 0 {
				cfg.Peers[j].Relay = "node1"
			}
		}
	})
	for _, tn := range nodes {
		tn.rt.SetHooks(sessions.Hooks{RoleRand: func(p protocol.Party) io.Reader { return protocol.SeededRand(seed, p) }})
		tn.rt.SetHooks(sessions.Hooks{EnvRand: func(p protocol.Party) io.Reader { return protocol.SeededEnvironmentRand(seed, p) }})
	}
	if k := nodes[1].host.ConnKind(nodes[3].host.ID()); k != p2p.ConnRelayed {
		t.Fatalf("node2's connection to node4 is %q, want relayed", k)
	}
	spec := fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\"]\n[params]\nbudget = %d\npaillier_bits = 512\n", budget)
	_, res := completedSession[samba.Result](t, nodes[0], spec, 60*time.Second)
	p, err := samba.Family{}.ParseParams(map[string]any{"budget": int64(budget), "paillier_bits": int64(512)})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := samba.Reference(p.(samba.Params), means, seed)
	if err != nil {
		t.Fatal(err)
	}
	if res.CumulativeReward != want {
		t.Errorf("the data customer got %d with the controller and an owner behind NATs, the standard algorithm %d", res.CumulativeReward, want)
	}
	if k := nodes[1].host.ConnKind(nodes[3].host.ID()); k != p2p.ConnRelayed {
		t.Errorf("node2's connection to node4 is %q after the session, want relayed", k)
	}
	t.Logf("%.3f ms a step (N = %d, K = 2), controller-owner4 relayed", res.MsPerStep, budget)
}

// TestRelayKeysNeedRestart: a reload that changes [relay] or a peer's relay
// is refused, naming the key.
func TestRelayKeysNeedRestart(t *testing.T) {
	old := testConfigs(t, 3)[0]
	for _, tc := range []struct {
		key    string
		change func(*config.Config)
	}{
		{"relay.service", func(c *config.Config) { c.Relay.Service = true }},
		{"relay.via", func(c *config.Config) { c.Relay.Via = "node2" }},
		{"relay.max_bytes_per_circuit", func(c *config.Config) { c.Relay.MaxBytesPerCircuit = new(int64(64 << 20)) }},
		{"relay.max_circuits_per_peer", func(c *config.Config) { c.Relay.MaxCircuitsPerPeer = new(4) }},
		{"relay.max_reservations", func(c *config.Config) { c.Relay.MaxReservations = new(4) }},
		{"peers.relay", func(c *config.Config) { c.Peers[1].Relay = "node2" }},
	} {
		next := *old
		next.Peers = append([]config.PeerConfig(nil), old.Peers...)
		tc.change(&next)
		_, err := config.DiffConfig(old, &next)
		var re *config.RestartError
		if !errors.As(err, &re) || len(re.Keys) != 1 || re.Keys[0] != tc.key {
			t.Errorf("changing %s: DiffConfig error %v, want a restart error naming it", tc.key, err)
		}
	}
}
