package p2p

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

func TestSendQueue(t *testing.T) {
	q := newSendQueue()
	var want [][]byte
	for i := range 100 {
		f := bytes.Repeat([]byte{byte(i)}, i%7)
		off := q.push(f)
		if got := q.buf[off:]; !bytes.Equal(got, append([]byte{byte(len(f))}, f...)) {
			t.Fatalf("frame %d encoded as %x", i, got)
		}
		want = append(want, f)
	}
	tests := []struct {
		name  string
		upto  uint64
		first uint64
		err   error
	}{
		{name: "nothing", upto: 1, first: 1},
		{name: "some", upto: 40, first: 40},
		{name: "behind", upto: 30, first: 40},
		{name: "more", upto: 90, first: 90},
		{name: "never sent", upto: 102, first: 90, err: errBadAck},
		{name: "all", upto: 101, first: 101},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := q.ack(tc.upto); !errors.Is(err, tc.err) {
				t.Fatalf("ack(%d): err = %v, want %v", tc.upto, err, tc.err)
			}
			if q.first != tc.first || q.frames() != 101-tc.first {
				t.Fatalf("after ack(%d): first %d, %d frames", tc.upto, q.first, q.frames())
			}
			// What is pending decodes to the frames from first on.
			rest := q.pending()
			for i := q.first; i < q.next; i++ {
				size, n := binary.Uvarint(rest)
				if got := rest[n : n+int(size)]; !bytes.Equal(got, want[i-1]) {
					t.Fatalf("pending frame %d = %x, want %x", i, got, want[i-1])
				}
				rest = rest[n+int(size):]
			}
			if len(rest) != 0 {
				t.Fatalf("%d bytes left over after the pending frames", len(rest))
			}
		})
	}
	if q.size() != 0 || len(q.buf) != 0 {
		t.Errorf("an empty queue holds %d bytes", len(q.buf))
	}
	q.push([]byte("x"))
	q.dropAll()
	if q.frames() != 0 || q.next != 102 {
		t.Errorf("after dropAll: %d frames, next %d; want 0 and 102", q.frames(), q.next)
	}
}

// The queue's buffer stays within about twice what it holds while frames
// are pushed and acknowledged for ever.
func TestSendQueueCompacts(t *testing.T) {
	q := newSendQueue()
	frame := make([]byte, 100)
	for i := range 100000 {
		q.push(frame)
		if i >= 10 {
			q.ack(q.next - 10)
		}
	}
	if q.frames() != 10 || cap(q.buf) > 8*q.size() {
		t.Errorf("%d frames of %d bytes in a buffer of %d", q.frames(), q.size(), cap(q.buf))
	}
}

func TestLinkHeader(t *testing.T) {
	good := appendHeader(nil, 0xfeedbeef01020304, 12345)
	size, n := binary.Uvarint(good)
	if int(size) != len(good)-n {
		t.Fatalf("length prefix %d, payload %d bytes", size, len(good)-n)
	}
	tests := []struct {
		name       string
		payload    []byte
		link, seq  uint64
		wantFailed bool
	}{
		{name: "good", payload: good[n:], link: 0xfeedbeef01020304, seq: 12345},
		{name: "empty", payload: nil, wantFailed: true},
		{name: "other magic", payload: append([]byte("XNL1"), good[n+4:]...), wantFailed: true},
		{name: "no sequence", payload: good[n : n+12], wantFailed: true},
		{name: "sequence zero", payload: append(append([]byte{}, good[n:n+12]...), 0), wantFailed: true},
		{name: "trailing bytes", payload: append(append([]byte{}, good[n:]...), 1), wantFailed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			link, seq, err := parseHeader(tc.payload)
			if tc.wantFailed {
				if !errors.Is(err, ErrFrameMalformed) {
					t.Fatalf("err = %v, want ErrFrameMalformed", err)
				}
				return
			}
			if err != nil || link != tc.link || seq != tc.seq {
				t.Fatalf("parseHeader = %x, %d, %v; want %x, %d", link, seq, err, tc.link, tc.seq)
			}
		})
	}
}

func FuzzLinkHeader(f *testing.F) {
	h := appendHeader(nil, 7, 1<<40)
	f.Add(h[1:])
	f.Add([]byte("BNL1"))
	f.Add([]byte("BNL100000000\xc3\x00")) // a sequence number's non-minimal varint, once accepted
	f.Fuzz(func(t *testing.T, b []byte) {
		link, seq, err := parseHeader(b)
		if err != nil {
			return
		}
		again := appendHeader(nil, link, seq)
		if !bytes.Equal(again[1:], b) {
			t.Fatalf("header %x parses to (%x, %d), which encode as %x", b, link, seq, again[1:])
		}
	})
}

// TestMessengerResendsAcrossLostConnections sends frames while the
// connection between the two hosts is closed again and again, from either
// side: every frame Send accepted reaches the handler once, in order.
func TestMessengerResendsAcrossLostConnections(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	cb := newCollector()
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
	mb := NewMessenger(b, testProto, cb.handleCopy, MessengerOptions{BorrowedFrames: true})
	t.Cleanup(func() { ma.Close(); mb.Close() })

	const total = 20000
	errc := make(chan error, 1)
	go func() {
		for i := range total {
			if err := ma.Send(t.Context(), b.ID(), []byte(strconv.Itoa(i))); err != nil {
				errc <- fmt.Errorf("send %d: %w", i, err)
				return
			}
		}
		errc <- nil
	}()
	for cut := 0; cut < 6; cut++ {
		at := (cut + 1) * total / 8
		waitFor(t, fmt.Sprintf("frame %d", at), func() bool { return cb.count(a.ID()) >= at })
		if cut%2 == 0 {
			a.LibP2P().Network().ClosePeer(b.ID())
		} else {
			b.LibP2P().Network().ClosePeer(a.ID())
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every frame", func() bool { return cb.count(a.ID()) >= total })
	got := cb.get(a.ID())
	if len(got) != total {
		t.Fatalf("received %d frames, want %d", len(got), total)
	}
	for i, f := range got {
		if string(f) != strconv.Itoa(i) {
			t.Fatalf("frame %d is %q", i, f)
		}
	}
	sa, sb := ma.Stats(), mb.Stats()
	t.Logf("sender %+v; receiver %+v", sa, sb)
	if sa.FramesSent != total || sb.FramesReceived != total || sa.FramesDropped != 0 {
		t.Errorf("sent %d, received %d, dropped %d; want %d, %d, 0", sa.FramesSent, sb.FramesReceived, sa.FramesDropped, total, total)
	}
	waitFor(t, "b to acknowledge every frame", func() bool { return ma.Stats().Unacknowledged == 0 })
}

// TestMessengerReplyAfterLostConnection is the exchange that used to stall
// a session: each side answers the other's frame, and the connection is
// closed right after a frame is written, before the peer could have read
// it. The frame is resent on the next connection and the exchange goes on.
func TestMessengerReplyAfterLostConnection(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	var mb *Messenger
	mb = NewMessenger(b, testProto, func(from peer.ID, frame []byte) {
		if err := mb.Send(context.Background(), from, frame); err != nil {
			t.Error(err)
		}
	}, MessengerOptions{})
	replies := make(chan []byte, 1)
	ma := NewMessenger(a, testProto, func(_ peer.ID, frame []byte) { replies <- frame }, MessengerOptions{})
	t.Cleanup(func() { ma.Close(); mb.Close() })
	var once sync.Once
	for i := range 200 {
		want := strconv.Itoa(i)
		if err := ma.Send(t.Context(), b.ID(), []byte(want)); err != nil {
			t.Fatal(err)
		}
		if i%20 == 10 {
			a.LibP2P().Network().ClosePeer(b.ID()) // the frame may still be in a's buffers
		}
		select {
		case got := <-replies:
			if string(got) != want {
				t.Fatalf("reply %q to %q", got, want)
			}
		case <-time.After(20 * time.Second):
			once.Do(func() { t.Logf("a %+v; b %+v", ma.Stats(), mb.Stats()) })
			t.Fatalf("no reply to frame %d", i)
		}
	}
	if sa, sb := ma.Stats(), mb.Stats(); sa.FramesReceived != 200 || sb.FramesReceived != 200 {
		t.Errorf("a received %d, b %d; want 200 each", sa.FramesReceived, sb.FramesReceived)
	}
}
