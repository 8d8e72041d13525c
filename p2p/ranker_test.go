package p2p

import (
	"testing"
	"time"

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
	st := h.book.Load().states[b]
	start := time.Now()
	for range quicAfterFailures {
		st.dialFailed(start, failRefused, errRefusedForTest)
	}
	if h.Gater().InterceptAddrDial(b, quic) {
		t.Errorf("the QUIC address was allowed after %d failures over TCP within a moment (daemons starting together)", quicAfterFailures)
	}
	st.dialSucceeded()
	for range quicAfterFailures - 1 {
		st.dialFailed(start.Add(-2*quicAfterFailing), failRefused, errRefusedForTest)
	}
	if h.Gater().InterceptAddrDial(b, quic) {
		t.Errorf("the QUIC address was allowed after %d failures over TCP", quicAfterFailures-1)
	}
	st.dialFailed(start, failRefused, errRefusedForTest)
	if !h.Gater().InterceptAddrDial(b, quic) {
		t.Errorf("the QUIC address was still refused after %d failures over TCP for %v", quicAfterFailures, quicAfterFailing)
	}
	st.dialSucceeded()
	if h.Gater().InterceptAddrDial(b, quic) {
		t.Error("the QUIC address was allowed after TCP had succeeded again")
	}
}

// errRefusedForTest is a refused dial, for tests of the dial policy.
var errRefusedForTest = &dialError{kind: failRefused, detail: "connection refused at /ip4/127.0.0.1/tcp/9"}
