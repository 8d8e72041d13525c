package p2p

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-multiaddr"
)

const testProto = protocol.ID("/bandit/test/1.0.0")

// collector records frames handed to a Messenger handler.
type collector struct {
	mu     sync.Mutex
	frames map[peer.ID][][]byte
}

func newCollector() *collector { return &collector{frames: map[peer.ID][][]byte{}} }

func (c *collector) handle(from peer.ID, frame []byte) {
	c.mu.Lock()
	c.frames[from] = append(c.frames[from], frame)
	c.mu.Unlock()
}

func (c *collector) count(from peer.ID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames[from])
}

func (c *collector) get(from peer.ID) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames[from]...)
}

// handleCopy records a copy of frame: the handler of a messenger that lends
// its frames (BorrowedFrames).
func (c *collector) handleCopy(from peer.ID, frame []byte) { c.handle(from, bytes.Clone(frame)) }

func TestMessengerManyFramesBothWays(t *testing.T) {
	for _, borrowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("borrowed=%v", borrowed), func(t *testing.T) { testManyFramesBothWays(t, borrowed) })
	}
}

// testManyFramesBothWays sends frames of many sizes, from empty to larger
// than a stream's read buffer, both ways at once, and checks that every one
// arrives intact and in order — with frames lent to the handler (which
// copies them) or handed over.
func testManyFramesBothWays(t *testing.T, borrowed bool) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	ca, cb := newCollector(), newCollector()
	ha, hb := ca.handle, cb.handle
	if borrowed {
		ha, hb = ca.handleCopy, cb.handleCopy
	}
	opts := MessengerOptions{BorrowedFrames: borrowed}
	ma := NewMessenger(a, testProto, ha, opts)
	mb := NewMessenger(b, testProto, hb, opts)
	t.Cleanup(func() { ma.Close(); mb.Close() })

	const n = 500
	frame := func(from string, i int) []byte {
		// Vary the size, including empty and multi-buffer frames.
		body := bytes.Repeat([]byte{byte(i)}, (i*37)%(3*streamBufferSize))
		return append([]byte(fmt.Sprintf("%s-%d:", from, i)), body...)
	}
	var wg sync.WaitGroup
	send := func(m *Messenger, to peer.ID, from string) {
		defer wg.Done()
		for i := range n {
			if err := m.Send(t.Context(), to, frame(from, i)); err != nil {
				t.Errorf("%s send %d: %v", from, i, err)
				return
			}
		}
	}
	wg.Add(2)
	go send(ma, b.ID(), "a")
	go send(mb, a.ID(), "b")
	wg.Wait()
	waitFor(t, "all frames to arrive", func() bool { return ca.count(b.ID()) == n && cb.count(a.ID()) == n })
	for i, f := range cb.get(a.ID()) {
		if !bytes.Equal(f, frame("a", i)) {
			t.Fatalf("b received frame %d out of order or corrupted: %.20q", i, f)
		}
	}
	for i, f := range ca.get(b.ID()) {
		if !bytes.Equal(f, frame("b", i)) {
			t.Fatalf("a received frame %d out of order or corrupted: %.20q", i, f)
		}
	}
	if st := ma.Stats(); st.FramesSent != n || st.FramesReceived != n || st.Errors != 0 {
		t.Errorf("a's stats = %+v", st)
	}
}

func TestMessengerRejectsBadFrames(t *testing.T) {
	const limit = 1024
	tests := []struct {
		name  string
		bytes []byte
	}{
		{name: "oversized", bytes: binary.AppendUvarint(nil, limit+1)},
		{name: "hostile length", bytes: binary.AppendUvarint(nil, 1<<60)},
		{name: "malformed length", bytes: bytes.Repeat([]byte{0xff}, 11)},
		{name: "truncated", bytes: append(binary.AppendUvarint(nil, 100), "short"...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tn := newTestNet(t, 2, nil)
			a, b := tn.hosts[0], tn.hosts[1]
			cb := newCollector()
			mb := NewMessenger(b, testProto, cb.handle, MessengerOptions{MaxFrameSize: limit})
			ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
			t.Cleanup(func() { ma.Close(); mb.Close() })

			// A raw stream writes the bad bytes; b must reset it.
			s, err := a.LibP2P().NewStream(t.Context(), b.ID(), testProto)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.name == "truncated" {
				s.CloseWrite() // end the stream inside the frame
			}
			s.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := s.Read(make([]byte, 1)); !errors.Is(err, network.ErrReset) {
				t.Fatalf("raw stream read after a bad frame: err = %v, want a reset", err)
			}
			waitFor(t, "b to count the error", func() bool { return mb.Stats().Errors == 1 })
			if n := cb.count(a.ID()); n != 0 {
				t.Fatalf("handler called %d times for a bad frame", n)
			}

			// The next, good stream works.
			if err := ma.Send(t.Context(), b.ID(), []byte("good")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the good frame", func() bool { return cb.count(a.ID()) == 1 })
			if got := cb.get(a.ID())[0]; string(got) != "good" {
				t.Fatalf("got %q, want good", got)
			}
		})
	}
}

func TestMessengerSendRecoversFromReset(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	cb := newCollector()
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
	mb := NewMessenger(b, testProto, cb.handle, MessengerOptions{MaxFrameSize: 16})
	t.Cleanup(func() { ma.Close(); mb.Close() })

	// b resets a's stream for an oversized frame; a's later Sends go through
	// on a new stream (a Send racing the reset may be lost, never reordered).
	if err := ma.Send(t.Context(), b.ID(), make([]byte, 17)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to reset the stream", func() bool { return mb.Stats().Errors == 1 })
	i := 0
	waitFor(t, "a good frame after the reset", func() bool {
		i++
		ma.Send(t.Context(), b.ID(), []byte(fmt.Sprint(i)))
		return cb.count(a.ID()) > 0
	})
}

func TestMessengerSendErrors(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a := tn.hosts[0]
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{MaxFrameSize: 8})
	down := tn.hosts[1].ID()
	tn.hosts[1].Close() // in the book, but gone
	_, stranger := newKey(t)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		to      peer.ID
		frame   []byte
		wantErr error
	}{
		{name: "unreachable peer", to: down, frame: []byte("x")},
		{name: "stranger", to: stranger, frame: []byte("x"), wantErr: ErrUnknownPeer},
		{name: "too large", to: down, frame: make([]byte, 9), wantErr: ErrFrameTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ma.Send(ctx, tc.to, tc.frame)
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.to == down && !bytes.Contains([]byte(err.Error()), []byte("node1")) {
				t.Errorf("error %q does not name the peer", err)
			}
		})
	}
	if err := ma.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ma.Send(ctx, down, []byte("x")); !errors.Is(err, ErrMessengerClosed) {
		t.Errorf("Send after Close: err = %v, want ErrMessengerClosed", err)
	}
}

func TestMessengerIdleStreamIsReplaced(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	cb := newCollector()
	opts := MessengerOptions{IdleTimeout: 100 * time.Millisecond}
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, opts)
	mb := NewMessenger(b, testProto, cb.handle, opts)
	t.Cleanup(func() { ma.Close(); mb.Close() })
	for i := range 3 {
		if err := ma.Send(t.Context(), b.ID(), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the frame", func() bool { return cb.count(a.ID()) == i+1 })
		time.Sleep(150 * time.Millisecond) // let the stream go idle
	}
	if st := ma.Stats(); st.Errors != 0 {
		t.Errorf("idle streams caused %d send errors", st.Errors)
	}
}

func TestMessengerOptionsValidate(t *testing.T) {
	bad := []MessengerOptions{
		{MaxFrameSize: -1}, {WriteTimeout: -1}, {ReadTimeout: -1}, {IdleTimeout: -1},
	}
	for _, o := range bad {
		if o.Validate() == nil {
			t.Errorf("%+v: Validate accepted a negative value", o)
		}
	}
	if err := (MessengerOptions{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
}

// benchPair returns two connected hosts speaking TCP on loopback.
func benchPair(b *testing.B) (*Host, *Host) {
	tn := newTestNet(b, 2, nil)
	tn.connectAll(b)
	return tn.hosts[0], tn.hosts[1]
}

// BenchmarkRequestResponse measures one 64-byte request and a 64-byte
// response over Messengers: the responder's handler answers on its own
// outbound stream, and the requester waits for the answer on a channel.
func BenchmarkRequestResponse(b *testing.B) {
	ha, hb := benchPair(b)
	var mb *Messenger
	mb = NewMessenger(hb, testProto, func(from peer.ID, frame []byte) {
		if err := mb.Send(context.Background(), from, frame); err != nil {
			b.Error(err)
		}
	}, MessengerOptions{})
	replies := make(chan []byte, 1)
	ma := NewMessenger(ha, testProto, func(_ peer.ID, frame []byte) { replies <- frame }, MessengerOptions{})
	b.Cleanup(func() { ma.Close(); mb.Close() })
	req := bytes.Repeat([]byte{'q'}, 64)
	ctx := context.Background()
	// Warm up: open both streams.
	if err := ma.Send(ctx, hb.ID(), req); err != nil {
		b.Fatal(err)
	}
	<-replies
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ma.Send(ctx, hb.ID(), req); err != nil {
			b.Fatal(err)
		}
		<-replies
	}
}

// BenchmarkRawStreamRequestResponse is the baseline for
// BenchmarkRequestResponse: the same exchange on one raw libp2p stream with a
// one-byte length prefix, no deadlines and no extra goroutines.
func BenchmarkRawStreamRequestResponse(b *testing.B) {
	ha, hb := benchPair(b)
	hb.LibP2P().SetStreamHandler(testProto, func(s network.Stream) {
		defer s.Close()
		r := bufio.NewReader(s)
		buf := make([]byte, 255)
		for {
			n, err := r.ReadByte()
			if err != nil {
				return
			}
			if _, err := io.ReadFull(r, buf[:n]); err != nil {
				return
			}
			out := append([]byte{n}, buf[:n]...)
			if _, err := s.Write(out); err != nil {
				return
			}
		}
	})
	s, err := ha.LibP2P().NewStream(context.Background(), hb.ID(), testProto)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Reset() })
	req := append([]byte{64}, bytes.Repeat([]byte{'q'}, 64)...)
	r := bufio.NewReader(s)
	resp := make([]byte, 65)
	roundTrip := func() {
		if _, err := s.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, resp); err != nil {
			b.Fatal(err)
		}
	}
	roundTrip()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		roundTrip()
	}
}

// TestMessengerSurvivesDuplicateConnClose: with two connections between a
// pair (both dialed each other), closing the one the outbound stream is on —
// as duplicate-connection pruning does — must not swallow later frames: Send
// notices the closed connection and reopens on the surviving one.
func TestMessengerSurvivesDuplicateConnClose(t *testing.T) {
	for round := range 5 {
		tn := newTestNet(t, 2, nil)
		a, b := tn.hosts[0], tn.hosts[1]
		cb := newCollector()
		ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
		mb := NewMessenger(b, testProto, cb.handle, MessengerOptions{})
		t.Cleanup(func() { ma.Close(); mb.Close() })
		// Both dial at once, as address-book dialers do at start.
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); a.LibP2P().Connect(t.Context(), peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}) }()
		go func() { defer wg.Done(); b.LibP2P().Connect(t.Context(), peer.AddrInfo{ID: a.ID(), Addrs: a.Addrs()}) }()
		wg.Wait()
		if n := len(a.LibP2P().Network().ConnsToPeer(b.ID())); n < 2 {
			t.Logf("round %d: only %d connection", round, n)
			continue
		}
		if err := ma.Send(t.Context(), b.ID(), []byte("before")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the first frame", func() bool { return cb.count(a.ID()) == 1 })
		// Close the stream's connection from b's side, as duplicate
		// pruning would, then send at once.
		var closed network.Conn
		for _, c := range b.LibP2P().Network().ConnsToPeer(a.ID()) {
			if slices.ContainsFunc(c.GetStreams(), func(s network.Stream) bool { return s.Protocol() == testProto }) {
				closed = c
				c.Close()
			}
		}
		if closed == nil {
			t.Fatal("no connection carries the stream")
		}
		// A frame written before a learns of the close cannot be saved
		// without acknowledgements; once a knows, no frame may be lost.
		waitFor(t, "a to see the close", func() bool {
			for _, c := range a.LibP2P().Network().ConnsToPeer(b.ID()) {
				if c.RemoteMultiaddr().Equal(closed.LocalMultiaddr()) && c.LocalMultiaddr().Equal(closed.RemoteMultiaddr()) {
					return false
				}
			}
			return true
		})
		if err := ma.Send(t.Context(), b.ID(), []byte("after")); err != nil {
			t.Fatalf("round %d: Send after the connection closed: %v", round, err)
		}
		waitFor(t, "the frame sent after the connection closed", func() bool { return cb.count(a.ID()) == 2 })
	}
}

// TestMessengerOpenBoundedWithoutDeadline sends with a context that has no
// deadline to a peer whose address accepts TCP and then never answers: the
// stream open must give up within the write timeout.
func TestMessengerOpenBoundedWithoutDeadline(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn // accepted and never answered
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	silent := multiaddr.StringCast("/ip4/127.0.0.1/tcp/" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	a.LibP2P().Peerstore().ClearAddrs(b.ID())
	a.LibP2P().Peerstore().AddAddr(b.ID(), silent, peerstore.PermanentAddrTTL)
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{WriteTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { ma.Close() })
	errc := make(chan error, 1)
	go func() { errc <- ma.Send(context.Background(), b.ID(), []byte("hello")) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a send to a peer that never answers succeeded")
		}
	case <-time.After(3 * time.Second): // libp2p itself gives up on the handshake after 5 s
		t.Fatal("a send without a deadline to a peer that never answers did not give up within 3 s (write timeout 300 ms)")
	}
}

func TestSender(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	cb := newCollector()
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{MaxFrameSize: 64})
	mb := NewMessenger(b, testProto, cb.handle, MessengerOptions{})
	t.Cleanup(func() { mb.Close() })

	_, stranger := newKey(t)
	if _, err := ma.Sender(stranger); !errors.Is(err, ErrUnknownPeer) {
		t.Errorf("Sender(stranger): err = %v, want ErrUnknownPeer", err)
	}
	s1, err := ma.Sender(b.ID())
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ma.Sender(b.ID())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	// Two senders and Messenger.Send share the peer's one stream: the frames
	// arrive in the order they were sent.
	var want [][]byte
	for i := range 30 {
		f := []byte(strconv.Itoa(i))
		var err error
		switch i % 3 {
		case 0:
			err = s1.Send(ctx, f)
		case 1:
			err = s2.Send(ctx, f)
		case 2:
			err = ma.Send(ctx, b.ID(), f)
		}
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		want = append(want, f)
	}
	waitFor(t, "every frame received", func() bool { return cb.count(a.ID()) == len(want) })
	if got := cb.get(a.ID()); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("received %q, want %q", got, want)
	}
	if st := ma.Stats(); st.FramesSent != uint64(len(want)) {
		t.Errorf("FramesSent = %d, want %d", st.FramesSent, len(want))
	}

	if err := s1.Send(ctx, make([]byte, 65)); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("oversized frame: err = %v, want ErrFrameTooLarge", err)
	}
	if err := ma.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s1.Send(ctx, []byte("x")); !errors.Is(err, ErrMessengerClosed) {
		t.Errorf("Send after Close: err = %v, want ErrMessengerClosed", err)
	}
	if _, err := ma.Sender(b.ID()); !errors.Is(err, ErrMessengerClosed) {
		t.Errorf("Sender after Close: err = %v, want ErrMessengerClosed", err)
	}
}

// The handler gets the sender's ID as the address book holds it, the same
// string, so that a caller comparing it with its own copy of the book's IDs
// compares pointers.
func TestMessengerHandsOverTheBooksPeerID(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	got := make(chan peer.ID, 1)
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
	mb := NewMessenger(b, testProto, func(from peer.ID, _ []byte) { got <- from }, MessengerOptions{})
	t.Cleanup(func() { ma.Close(); mb.Close() })
	if err := ma.Send(t.Context(), b.ID(), []byte("x")); err != nil {
		t.Fatal(err)
	}
	var from peer.ID
	select {
	case from = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
	}
	book := b.book[b.byID[a.ID()]].ID
	if from != a.ID() {
		t.Fatalf("from = %s, want %s", from, a.ID())
	}
	if unsafe.StringData(string(from)) != unsafe.StringData(string(book)) {
		t.Error("the handler's peer ID is not the address book's copy")
	}
}

// TestMessengerStreamHandlers: with NewStreamHandler, each inbound stream
// gets a handler of its own, made once for the stream with its sender's ID,
// which sees that stream's frames in order and may keep state between them
// without a lock.
func TestMessengerStreamHandlers(t *testing.T) {
	tn := newTestNet(t, 3, nil)
	a, b, c := tn.hosts[0], tn.hosts[1], tn.hosts[2]
	var (
		mu      sync.Mutex
		made    = map[peer.ID]int{} // handlers made, by sender
		inOrder = map[peer.ID]int{} // frames seen in order, by sender
	)
	opts := MessengerOptions{BorrowedFrames: true, NewStreamHandler: func(from peer.ID) func([]byte) {
		mu.Lock()
		made[from]++
		mu.Unlock()
		next := 0 // the stream's own state
		return func(frame []byte) {
			if string(frame) == strconv.Itoa(next) {
				next++
			}
			mu.Lock()
			inOrder[from] = next
			mu.Unlock()
		}
	}}
	mc := NewMessenger(c, testProto, nil, opts)
	ma := NewMessenger(a, testProto, newCollector().handle, MessengerOptions{})
	mb := NewMessenger(b, testProto, newCollector().handle, MessengerOptions{})
	t.Cleanup(func() { ma.Close(); mb.Close(); mc.Close() })
	const n = 200
	for i := range n {
		for _, m := range []*Messenger{ma, mb} {
			if err := m.Send(t.Context(), c.ID(), []byte(strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "every frame in order", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inOrder[a.ID()] == n && inOrder[b.ID()] == n
	})
	mu.Lock()
	defer mu.Unlock()
	if made[a.ID()] != 1 || made[b.ID()] != 1 || len(made) != 2 {
		t.Fatalf("stream handlers made: %v, want one for each sender", made)
	}
}

func TestNewMessengerWithoutHandlerPanics(t *testing.T) {
	tn := newTestNet(t, 1, nil)
	defer func() {
		if recover() == nil {
			t.Fatal("NewMessenger with neither a handler nor NewStreamHandler did not panic")
		}
	}()
	NewMessenger(tn.hosts[0], testProto, nil, MessengerOptions{})
}

// TestMessengerClosesIdleInboundStreams: an inbound stream that carries
// frames stays open across idle timeouts, however long; one that carries
// none for twice the idle timeout is closed.
func TestMessengerClosesIdleInboundStreams(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	// Frames 50 ms apart against a 1 s idle timeout (a silent stream closes
	// after one to two of them): a sender paused by a loaded machine for
	// most of a second still keeps its stream.
	const idle = time.Second
	var mu sync.Mutex
	streams, frames := 0, 0
	mb := NewMessenger(b, testProto, nil, MessengerOptions{IdleTimeout: idle, NewStreamHandler: func(peer.ID) func([]byte) {
		mu.Lock()
		streams++
		mu.Unlock()
		return func([]byte) {
			mu.Lock()
			frames++
			mu.Unlock()
		}
	}})
	// The sender keeps its stream for an hour: only the receiver closes it.
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{IdleTimeout: time.Hour})
	t.Cleanup(func() { ma.Close(); mb.Close() })
	inbound := func() int {
		mb.mu.Lock()
		defer mb.mu.Unlock()
		return len(mb.streams)
	}
	const n = 60
	for i := range n { // three idle timeouts of frames, one every 50 ms
		if err := ma.Send(t.Context(), b.ID(), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitFor(t, "every frame", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return frames == n
	})
	if got := inbound(); got != 1 || streams != 1 {
		t.Fatalf("after frames for three idle timeouts: %d inbound streams open, %d handled, want the one", got, streams)
	}
	waitFor(t, "the idle stream to close", func() bool { return inbound() == 0 })
}

// TestMessengerHandlerPanicResetsOnlyTheStream: a handler that panics on a
// frame ends that stream, not the process; the sender's later frames arrive
// on a new stream with a new handler, and frames of other senders are not
// disturbed.
func TestMessengerHandlerPanicResetsOnlyTheStream(t *testing.T) {
	for _, borrowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("borrowed=%v", borrowed), func(t *testing.T) {
			tn := newTestNet(t, 3, nil)
			a, b, c := tn.hosts[0], tn.hosts[1], tn.hosts[2]
			cb := newCollector()
			var made atomic.Int64
			opts := MessengerOptions{BorrowedFrames: borrowed, NewStreamHandler: func(from peer.ID) func([]byte) {
				made.Add(1)
				return func(frame []byte) {
					if string(frame) == "boom" {
						panic("handler bug")
					}
					cb.handleCopy(from, frame)
				}
			}}
			mc := NewMessenger(c, testProto, nil, opts)
			ma := NewMessenger(a, testProto, newCollector().handle, MessengerOptions{})
			mb := NewMessenger(b, testProto, newCollector().handle, MessengerOptions{})
			t.Cleanup(func() { ma.Close(); mb.Close(); mc.Close() })
			for _, f := range []string{"before", "boom"} {
				if err := ma.Send(t.Context(), c.ID(), []byte(f)); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "c to reset a's stream", func() bool { return mc.Stats().Errors == 1 })
			if err := mb.Send(t.Context(), c.ID(), []byte("other")); err != nil {
				t.Fatal(err)
			}
			i := 0
			waitFor(t, "a frame from a after the reset, and b's", func() bool {
				i++
				ma.Send(t.Context(), c.ID(), []byte(fmt.Sprint("after", i)))
				return cb.count(a.ID()) > 1 && cb.count(b.ID()) == 1
			})
			if got := cb.get(a.ID())[0]; string(got) != "before" {
				t.Errorf("first frame from a = %q, want before", got)
			}
			if made.Load() < 3 {
				t.Errorf("%d stream handlers made, want a new one for a's stream after the reset", made.Load())
			}
		})
	}
}
