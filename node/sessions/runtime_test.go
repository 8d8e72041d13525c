package sessions

import (
	"context"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
	dto "github.com/prometheus/client_model/go"
)

// testRegistry registers every family.
func testRegistry(t testing.TB) *protocol.Registry {
	t.Helper()
	reg, err := protocol.NewRegistry(ping.Family{}, bai.Family{}, pfcb.Family{}, samba.Family{}, mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// counterValue reads a Prometheus counter.
func counterValue(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// attachedRuntime returns a runtime attached to a real libp2p host that
// does not listen, named node1, whose address book holds one peer, node2
// (not running): enough to build sessions without a network.
func attachedRuntime(t *testing.T) (rt *Runtime, other peer.ID) {
	t.Helper()
	dir := t.TempDir()
	key, _, err := p2p.GenerateIdentity(filepath.Join(dir, "identity.key"))
	if err != nil {
		t.Fatal(err)
	}
	_, other, err = p2p.GenerateIdentity(filepath.Join(dir, "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultConfig()
	cfg.Node.Name, cfg.Node.DataDir = "node1", dir
	cfg.Peers = []config.PeerConfig{{Name: "node2", PeerID: other.String(), Addrs: []string{"/ip4/127.0.0.1/tcp/9"}}}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs, err := store.NewSessionLogs(filepath.Join(dir, "logs"), store.DefaultSessionLogLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	reg := testRegistry(t)
	rt = New(Config{Config: cfg, Registry: reg, Metrics: metrics.New(reg.Names()...), Store: st, Logs: logs, Events: events.New(16)})
	book, err := rt.AddressBook(cfg)
	if err != nil {
		t.Fatal(err)
	}
	host, err := p2p.NewHost(p2p.Config{Key: key, ListenAddrs: []multiaddr.Multiaddr{multiaddr.StringCast("/ip4/127.0.0.1/tcp/0")}, DeferListen: true, Peers: book})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := rt.Attach(ctx, host, book); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt, other
}

// TestSessionSharesItsStrings: a session's role names are the family's
// own strings and its organizations' peer IDs the node's or the address
// book's, so that the comparisons of every message compare pointers.
func TestSessionSharesItsStrings(t *testing.T) {
	n, other := attachedRuntime(t)
	self := n.host.ID()
	// Fresh copies, as a decoded proposal carries them.
	assign := protocol.Assignment{Roles: map[string][]string{string([]byte(ping.RoleParticipant)): {
		string([]byte(other.String())), string([]byte(self.String()))}}}
	s, err := n.newSession(n.live.Load(), "0123456789abcdef", ping.Family{}, nil, nil, assign, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := n.live.Load()
	for r, name := range s.roleNames {
		spec, err := protocol.RoleSpecOf(s.fam, name)
		if err != nil {
			t.Fatal(err)
		}
		if unsafe.StringData(name) != unsafe.StringData(spec.Name) {
			t.Errorf("role %q is a copy of the family's name", name)
		}
		for i, org := range s.orgs[r] {
			want := s.self
			if org != s.self {
				want = live.ids[live.names[org]]
			}
			if unsafe.StringData(string(org)) != unsafe.StringData(string(want)) {
				t.Errorf("%s[%d] (%s) is a copy of the node's or the address book's ID", name, i, n.nameOf(org))
			}
		}
	}
	if len(s.mine) != 1 {
		t.Fatalf("node1 plays %v, want one party", s.mine)
	}
	for _, p := range s.mine {
		if unsafe.StringData(p.Role) != unsafe.StringData(s.roleNames[roleIndex(s.roleNames, p.Role)]) {
			t.Errorf("local party %s has a copy of its role's name", p)
		}
	}
}

// TestDeliverMarksTheSenderHeard: a protocol message marks the
// organization that plays its sender as heard, for the loop to hand to the
// lifecycle (lifecycle.Machine.Heard): data that arrives proves its sender
// alive even while its heartbeats wait behind it on a slow link. Only the
// sender is marked, and the mark is the loop's to clear.
func TestDeliverMarksTheSenderHeard(t *testing.T) {
	n, other := attachedRuntime(t)
	self := n.host.ID()
	assign := protocol.Assignment{Roles: map[string][]string{ping.RoleParticipant: {other.String(), self.String()}}}
	s, err := n.newSession(n.live.Load(), "0123456789abcdef", ping.Family{}, nil, nil, assign, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	them, us := s.orgIndex[other], s.orgIndex[self]
	if s.heard[them].Load() || s.heard[us].Load() {
		t.Fatal("an organization is marked heard before any message")
	}
	s.deliver(protocol.Message{From: protocol.Party{Role: ping.RoleParticipant, Index: 0}, To: s.mine[0], Body: []byte{1}}, false, false)
	if !s.heard[them].Load() {
		t.Errorf("a message from %s's party did not mark it heard", n.nameOf(other))
	}
	if s.heard[us].Load() {
		t.Errorf("a message from %s's party marked this node heard", n.nameOf(other))
	}
	s.deliver(protocol.Message{From: protocol.Party{Role: ping.RoleParticipant, Index: 7}, To: s.mine[0], Body: []byte{1}}, false, false)
	if s.heard[us].Load() {
		t.Errorf("a message from a party the session does not have marked an organization heard")
	}
}
