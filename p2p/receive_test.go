package p2p

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

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
	bb := b.book.Load()
	book := bb.peers[bb.byID[a.ID()]].ID
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
	opts := MessengerOptions{BorrowedFrames: true, NewStreamHandler: func(from peer.ID) StreamHandler {
		mu.Lock()
		made[from]++
		mu.Unlock()
		next := 0 // the stream's own state
		return StreamHandler{Frame: func(frame []byte) {
			if string(frame) == strconv.Itoa(next) {
				next++
			}
			mu.Lock()
			inOrder[from] = next
			mu.Unlock()
		}}
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
	mb := NewMessenger(b, testProto, nil, MessengerOptions{IdleTimeout: idle, NewStreamHandler: func(peer.ID) StreamHandler {
		mu.Lock()
		streams++
		mu.Unlock()
		return StreamHandler{Frame: func([]byte) {
			mu.Lock()
			frames++
			mu.Unlock()
		}}
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
			opts := MessengerOptions{BorrowedFrames: borrowed, NewStreamHandler: func(from peer.ID) StreamHandler {
				made.Add(1)
				return StreamHandler{Frame: func(frame []byte) {
					if string(frame) == "boom" {
						panic("handler bug")
					}
					cb.handleCopy(from, frame)
				}}
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
