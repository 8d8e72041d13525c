package p2p

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/multiformats/go-multiaddr"
)

func TestMessengerSendRecoversFromReset(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	cb := newCollector()
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
	mb := NewMessenger(b, testProto, cb.handle, MessengerOptions{MaxFrameSize: 16})
	t.Cleanup(func() { ma.Close(); mb.Close() })

	// b resets a's stream for an oversized frame, and every stream that
	// resends it; a gives up on it (and on what it queued behind it) after
	// maxFruitless streams, and its later Sends go through on a new link.
	if err := ma.Send(t.Context(), b.ID(), make([]byte, 17)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to reset the stream", func() bool { return mb.Stats().Errors >= 1 })
	i := 0
	waitFor(t, "a good frame after the reset", func() bool {
		i++
		ma.Send(t.Context(), b.ID(), []byte(fmt.Sprint(i)))
		return cb.count(a.ID()) > 0
	})
	if st := ma.Stats(); st.FramesDropped == 0 {
		t.Errorf("a dropped no frame: %+v", st)
	}
	if n := mb.Stats().Errors; n < maxFruitless {
		t.Errorf("b reset %d streams, want the first and %d resends at least", n, maxFruitless-1)
	}
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
// Send must return within the write timeout, the frame left to the link's
// resends (a peer that does not answer may be behind a network cut).
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
		if err != nil {
			t.Fatalf("a send to a peer that does not answer failed (%v), rather than leaving the frame to resends", err)
		}
	case <-time.After(3 * time.Second): // libp2p itself gives up on the handshake after 5 s
		t.Fatal("a send without a deadline to a peer that never answers did not return within 3 s (write timeout 300 ms)")
	}
	if st := ma.Stats(); st.Unacknowledged != 1 {
		t.Errorf("%d frames awaiting acknowledgement, want the one sent", st.Unacknowledged)
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

// TestMessengerGivesUpOnConnectionsThatNeverCarry: a network that closes
// every connection before a frame is acknowledged (here the receiver reads
// the stream's first bytes and closes the connection, acknowledging
// nothing) is not held against the peer as a refusal (maxFruitless), but
// it does not make the sender resend for ever either: after maxConnLosses
// such streams in a row it gives up, saying why.
func TestMessengerGivesUpOnConnectionsThatNeverCarry(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	gaveUp := make(chan string, 1)
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{OnGiveUp: func(_ peer.ID, _ uint64, why string) {
		select {
		case gaveUp <- why:
		default:
		}
	}})
	t.Cleanup(func() { ma.Close() })
	b.LibP2P().SetStreamHandler(testProto, func(s network.Stream) {
		s.Read(make([]byte, 1))
		s.Conn().Close()
	})
	if err := ma.Send(t.Context(), b.ID(), []byte("never acknowledged")); err != nil {
		t.Fatal(err)
	}
	select {
	case why := <-gaveUp:
		if want := fmt.Sprintf("%d connections in a row closed before the peer acknowledged frame", maxConnLosses); !strings.Contains(why, want) {
			t.Errorf("gave up because %q, want %q", why, want)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("no give-up after 2 minutes: %+v", ma.Stats())
	}
}
