package p2p

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/multiformats/go-multiaddr"
)

func TestTCPFirstRanker(t *testing.T) {
	tcp := multiaddr.StringCast("/ip4/127.0.0.1/tcp/4001")
	tcp6 := multiaddr.StringCast("/ip6/::1/tcp/4001")
	quic := multiaddr.StringCast("/ip4/127.0.0.1/udp/4001/quic-v1")
	tests := []struct {
		name  string
		addrs []multiaddr.Multiaddr
		// firstQUIC is the earliest a QUIC address may be dialed.
		firstQUIC time.Duration
	}{
		{"tcp and quic", []multiaddr.Multiaddr{quic, tcp}, quicFallbackDelay},
		{"two tcp and quic", []multiaddr.Multiaddr{quic, tcp6, tcp}, quicFallbackDelay},
		{"quic only", []multiaddr.Multiaddr{quic}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ranked := tcpFirstRanker(tc.addrs)
			if len(ranked) != len(tc.addrs) {
				t.Fatalf("ranked %d addresses of %d", len(ranked), len(tc.addrs))
			}
			var lastTCP time.Duration
			for _, d := range ranked {
				if isTCP(d.Addr) {
					lastTCP = max(lastTCP, d.Delay)
				}
			}
			for _, d := range ranked {
				if isTCP(d.Addr) {
					continue
				}
				if d.Delay < tc.firstQUIC || (lastTCP > 0 && d.Delay < lastTCP+quicFallbackDelay) {
					t.Errorf("QUIC address %s dialed after %v, before TCP had %v", d.Addr, d.Delay, quicFallbackDelay)
				}
			}
		})
	}
}

func TestDialAddrAllowed(t *testing.T) {
	self, _ := newKey(t)
	_, b := newKey(t)
	_, q := newKey(t)
	tcp := multiaddr.StringCast("/ip4/127.0.0.1/tcp/1")
	quic := multiaddr.StringCast("/ip4/127.0.0.1/udp/1/quic-v1")
	h, err := NewHost(Config{Key: self, ListenAddrs: []multiaddr.Multiaddr{multiaddr.StringCast("/ip4/127.0.0.1/tcp/0")},
		Peers: []Peer{{Name: "both", ID: b, Addrs: []multiaddr.Multiaddr{tcp, quic}},
			{Name: "quic", ID: q, Addrs: []multiaddr.Multiaddr{quic}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !h.Gater().InterceptAddrDial(b, tcp) {
		t.Error("a TCP address was refused")
	}
	if h.Gater().InterceptAddrDial(b, quic) {
		t.Error("the QUIC address of a peer with a TCP address was allowed before any failure")
	}
	if !h.Gater().InterceptAddrDial(q, quic) {
		t.Error("the QUIC address of a peer without a TCP address was refused")
	}
	h.states[b].tcpFailures.Store(quicAfterFailures)
	if !h.Gater().InterceptAddrDial(b, quic) {
		t.Errorf("the QUIC address was still refused after %d failures over TCP", quicAfterFailures)
	}
}

// fakeConn is a network.Conn with only what oldestConn looks at.
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

func TestOldestConnPrefersTCP(t *testing.T) {
	t0 := time.Now()
	tcp := multiaddr.StringCast("/ip4/127.0.0.1/tcp/1")
	quic := multiaddr.StringCast("/ip4/127.0.0.1/udp/1/quic-v1")
	conn := func(name string, age time.Duration, a multiaddr.Multiaddr, closed, limited bool) network.Conn {
		c := &fakeConn{name: name, closed: closed, raddr: a}
		c.stat.Opened = t0.Add(-age)
		c.stat.Limited = limited
		return c
	}
	tests := []struct {
		name  string
		conns []network.Conn
		want  string
	}{
		{"none", nil, ""},
		{"older quic, newer tcp", []network.Conn{conn("q", 2*time.Second, quic, false, false), conn("t", time.Second, tcp, false, false)}, "t"},
		{"two tcp", []network.Conn{conn("t1", time.Second, tcp, false, false), conn("t2", 2*time.Second, tcp, false, false)}, "t2"},
		{"closed tcp", []network.Conn{conn("t", 2*time.Second, tcp, true, false), conn("q", time.Second, quic, false, false)}, "q"},
		{"limited tcp", []network.Conn{conn("t", 2*time.Second, tcp, false, true), conn("q", time.Second, quic, false, false)}, "q"},
		{"two quic", []network.Conn{conn("q1", time.Second, quic, false, false), conn("q2", 3*time.Second, quic, false, false)}, "q2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := oldestConn(tc.conns)
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
