package p2p

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/multiformats/go-multiaddr"
)

// fakeConn is a network.Conn with only what preferredConn looks at.
type fakeConn struct {
	network.Conn
	name   string
	closed bool
	stat   network.ConnStats
	raddr  multiaddr.Multiaddr
}

func (c *fakeConn) IsClosed() bool                       { return c.closed }
func (c *fakeConn) Stat() network.ConnStats              { return c.stat }
func (c *fakeConn) RemoteMultiaddr() multiaddr.Multiaddr { return c.raddr }

func TestPreferredConn(t *testing.T) {
	t0 := time.Now()
	tcp := multiaddr.StringCast("/ip4/127.0.0.1/tcp/1")
	quic := multiaddr.StringCast("/ip4/127.0.0.1/udp/1/quic-v1")
	relayed := multiaddr.StringCast("/ip4/127.0.0.1/tcp/2/p2p/12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx/p2p-circuit")
	type c struct {
		name    string
		age     time.Duration
		addr    multiaddr.Multiaddr
		out     bool // dialed by this end
		closed  bool
		limited bool
	}
	tests := []struct {
		name      string
		selfLower bool
		conns     []c
		want      string
	}{
		{"none", true, nil, ""},
		{"older quic, newer tcp", true, []c{{"q", 2 * time.Second, quic, true, false, false}, {"t", time.Second, tcp, true, false, false}}, "t"},
		{"two tcp, same dialer", true, []c{{"t1", time.Second, tcp, true, false, false}, {"t2", 2 * time.Second, tcp, true, false, false}}, "t2"},
		{"two tcp, the lower peer's dial wins (self lower)", true, []c{{"in", 2 * time.Second, tcp, false, false, false}, {"out", time.Second, tcp, true, false, false}}, "out"},
		{"two tcp, the lower peer's dial wins (peer lower)", false, []c{{"in", time.Second, tcp, false, false, false}, {"out", 2 * time.Second, tcp, true, false, false}}, "in"},
		{"tcp before the lower peer's quic", true, []c{{"q", 2 * time.Second, quic, true, false, false}, {"t", time.Second, tcp, false, false, false}}, "t"},
		{"closed tcp", true, []c{{"t", 2 * time.Second, tcp, true, true, false}, {"q", time.Second, quic, true, false, false}}, "q"},
		{"limited tcp", true, []c{{"t", 2 * time.Second, tcp, true, false, true}, {"q", time.Second, quic, true, false, false}}, "q"},
		{"direct quic before older relayed (over tcp), the lower peer's", true, []c{{"r", 2 * time.Second, relayed, true, false, false}, {"q", time.Second, quic, false, false, false}}, "q"},
		{"relayed when alone", true, []c{{"r", time.Second, relayed, false, false, false}}, "r"},
		{"two quic", true, []c{{"q1", time.Second, quic, true, false, false}, {"q2", 3 * time.Second, quic, true, false, false}}, "q2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var conns []network.Conn
			for _, x := range tc.conns {
				f := &fakeConn{name: x.name, closed: x.closed, raddr: x.addr}
				f.stat.Opened = t0.Add(-x.age)
				f.stat.Limited = x.limited
				f.stat.Direction = network.DirInbound
				if x.out {
					f.stat.Direction = network.DirOutbound
				}
				conns = append(conns, f)
			}
			got := preferredConn(tc.selfLower, conns)
			name := ""
			if got != nil {
				name = got.(*fakeConn).name
			}
			if name != tc.want {
				t.Errorf("chose %q, want %q", name, tc.want)
			}
		})
	}
}

// dialEachOther makes a and b dial each other at the same moment until they
// hold two connections; it skips the test if 100 tries never do.
func dialEachOther(t *testing.T, a, b *Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for range 100 {
		a.LibP2P().Network().ClosePeer(b.ID())
		b.LibP2P().Network().ClosePeer(a.ID())
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; a.connect(ctx, b.ID()) })
		wg.Go(func() { <-start; b.connect(ctx, a.ID()) })
		close(start)
		wg.Wait()
		if len(a.LibP2P().Network().ConnsToPeer(b.ID())) > 1 {
			return
		}
	}
	t.Skip("no simultaneous dial produced two connections in 100 tries")
}

// TestDuplicateConnectionsClosed checks that of two connections formed by a
// simultaneous dial one is closed, and both ends keep the same one.
func TestDuplicateConnectionsClosed(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	a.dupGrace, b.dupGrace = 200*time.Millisecond, 200*time.Millisecond
	dialEachOther(t, a, b)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ca, cb := a.LibP2P().Network().ConnsToPeer(b.ID()), b.LibP2P().Network().ConnsToPeer(a.ID())
		if len(ca) == 1 && len(cb) == 1 {
			if ca[0].LocalMultiaddr().String() != cb[0].RemoteMultiaddr().String() {
				t.Fatalf("the two ends kept different connections: %s and %s", ca[0].LocalMultiaddr(), cb[0].RemoteMultiaddr())
			}
			if a.bestConn(b.ID()) != ca[0] || b.bestConn(a.ID()) != cb[0] {
				t.Fatal("an end does not prefer the connection it kept")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d and %d connections after the duplicate's grace", len(ca), len(cb))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBusyDuplicateKept checks that a duplicate connection carrying a stream
// of ours is not closed under it.
func TestBusyDuplicateKept(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	// The stream must be open at both ends before the grace ends: 1.5 s
	// leaves room for a loaded machine.
	const grace = 1500 * time.Millisecond
	a.dupGrace, b.dupGrace = grace, grace
	dialEachOther(t, a, b)
	keep := a.bestConn(b.ID())
	var other network.Conn
	for _, c := range a.LibP2P().Network().ConnsToPeer(b.ID()) {
		if c != keep {
			other = c
		}
	}
	s, err := other.NewStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Reset()
	if err := s.SetProtocol("/bandit/test/1.0.0"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(grace + time.Second)
	if other.IsClosed() {
		t.Fatal("a duplicate carrying a stream of ours was closed")
	}
	if keep.IsClosed() {
		t.Fatal("the preferred connection was closed")
	}
}
