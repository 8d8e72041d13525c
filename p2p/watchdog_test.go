package p2p

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// stallProxy forwards TCP connections to target until stalled: then it
// stops reading, so that nothing more crosses it and nothing fails, as on
// a network cut.
type stallProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	stall  bool
}

func newStallProxy(t *testing.T, target multiaddr.Multiaddr) *stallProxy {
	t.Helper()
	_, addr, err := manet.DialArgs(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: addr}
	p.cond = sync.NewCond(&p.mu)
	t.Cleanup(func() { p.set(false); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, u)
			go p.pipe(u, c)
		}
	}()
	return p
}

func (p *stallProxy) addr() multiaddr.Multiaddr {
	a, _ := manet.FromNetAddr(p.ln.Addr())
	return a
}

func (p *stallProxy) set(stall bool) {
	p.mu.Lock()
	p.stall = stall
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *stallProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		p.mu.Lock()
		for p.stall {
			p.cond.Wait()
		}
		p.mu.Unlock()
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				src.Close()
			}
			return
		}
	}
}

// TestMessengerWatchdogReplacesAStalledConnection: frames sent into a
// connection that no longer carries anything, and does not close, are
// resent on a new connection once the watchdog finds them unacknowledged
// and the peer silent to a ping; each reaches the handler once, in order.
func TestMessengerWatchdogReplacesAStalledConnection(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	cb := newCollector()
	opts := MessengerOptions{StallTimeout: 300_000_000} // 300 ms
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, opts)
	mb := NewMessenger(b, testProto, cb.handleCopy, MessengerOptions{BorrowedFrames: true})
	t.Cleanup(func() { ma.Close(); mb.Close() })
	proxy := newStallProxy(t, b.Addrs()[0])
	a.LibP2P().Peerstore().ClearAddrs(b.ID())
	if err := a.LibP2P().Connect(t.Context(), peer.AddrInfo{ID: b.ID(), Addrs: []multiaddr.Multiaddr{proxy.addr()}}); err != nil {
		t.Fatal(err)
	}
	conns := a.LibP2P().Network().ConnsToPeer(b.ID())
	if len(conns) != 1 || !conns[0].RemoteMultiaddr().Equal(proxy.addr()) {
		t.Fatalf("a's connections to b: %v, want one through the proxy", conns)
	}
	proxied := conns[0]
	send := func(from, to int) {
		for i := from; i < to; i++ {
			if err := ma.Send(t.Context(), b.ID(), []byte(strconv.Itoa(i))); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
	}
	send(0, 100)
	waitFor(t, "the first 100 frames", func() bool { return cb.count(a.ID()) == 100 })
	proxy.set(true)
	send(100, 200)
	waitFor(t, "the watchdog to close the stalled connection", proxied.IsClosed)
	waitFor(t, "all 200 frames", func() bool { return cb.count(a.ID()) >= 200 })
	for i, f := range cb.get(a.ID()) {
		if string(f) != strconv.Itoa(i) {
			t.Fatalf("frame %d is %q", i, f)
		}
	}
	if n := cb.count(a.ID()); n != 200 {
		t.Fatalf("received %d frames, want 200", n)
	}
	if st := ma.Stats(); st.FramesResent == 0 {
		t.Errorf("no frame was resent: %+v", st)
	}
}
