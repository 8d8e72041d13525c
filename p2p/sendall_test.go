package p2p

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// burstReceiver is a stream handler that records the frames of each
// inbound stream and how many of them had come when Drained was called.
type burstReceiver struct {
	m       *Messenger // the receiver's
	mu      sync.Mutex
	frames  [][]byte
	drained []int // len(frames) at each Drained
}

func (r *burstReceiver) handler(peer.ID) StreamHandler {
	return StreamHandler{
		Frame: func(frame []byte) {
			if string(frame) == "boom" {
				panic("handler bug")
			}
			r.mu.Lock()
			r.frames = append(r.frames, bytes.Clone(frame))
			r.mu.Unlock()
		},
		Drained: func() {
			r.mu.Lock()
			r.drained = append(r.drained, len(r.frames))
			r.mu.Unlock()
		},
	}
}

// burstPair starts a sender's messenger (with opts) and a receiver's whose
// streams a burstReceiver handles (lending its frames if borrowed), and
// returns the receiver, the sender's messenger, its Sender to the receiver
// and a context of 10 s for the sends.
func burstPair(t *testing.T, opts MessengerOptions, borrowed bool) (*burstReceiver, *Messenger, *Sender, context.Context) {
	t.Helper()
	tn := newTestNet(t, 2, nil)
	a, b := tn.hosts[0], tn.hosts[1]
	rb := &burstReceiver{}
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, opts)
	rb.m = NewMessenger(b, testProto, nil, MessengerOptions{BorrowedFrames: borrowed, NewStreamHandler: rb.handler})
	t.Cleanup(func() { ma.Close(); rb.m.Close() })
	sd, err := ma.Sender(b.ID())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return rb, ma, sd, ctx
}

func (r *burstReceiver) seen() (frames [][]byte, drained []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.frames), slices.Clone(r.drained)
}

// TestSenderSendAll: frames sent together arrive in order among those sent
// one by one, are counted one by one, and come in one write: the receiver
// reads them as one burst and is drained once, after the last; a burst
// over maxWrite comes in writes of at most maxWrite. A batch with a frame
// over the limit is refused whole.
func TestSenderSendAll(t *testing.T) {
	rb, ma, sd, ctx := burstPair(t, MessengerOptions{MaxFrameSize: 64}, true)

	var want [][]byte
	frame := func() []byte {
		f := []byte("frame " + strconv.Itoa(len(want)))
		want = append(want, f)
		return f
	}
	// One frame first: the stream opens with it, its header written alone.
	if err := sd.Send(ctx, frame()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first frame", func() bool { f, _ := rb.seen(); return len(f) == 1 })
	const burst = 100 // 1.1 KB: one muxer frame, within one read
	var all [][]byte
	for range burst {
		all = append(all, frame())
	}
	if err := sd.SendAll(ctx, all); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the burst", func() bool { f, _ := rb.seen(); return len(f) == 1+burst })
	if err := sd.SendAll(ctx, nil); err != nil {
		t.Errorf("SendAll of no frames: %v", err)
	}
	if err := sd.Send(ctx, frame()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the last frame", func() bool { f, _ := rb.seen(); return len(f) == len(want) })

	got, drained := rb.seen()
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("received %q, want %q", got, want)
	}
	if wantDrained := []int{1, 1 + burst, 2 + burst}; !slices.Equal(drained, wantDrained) {
		t.Errorf("drained after frames %v, want %v (once after each write)", drained, wantDrained)
	}
	if st := ma.Stats(); st.FramesSent != uint64(len(want)) || st.Writes != 3 {
		t.Errorf("FramesSent = %d in %d writes, want %d in 3", st.FramesSent, st.Writes, len(want))
	}
	// A burst over maxWrite goes in writes of at most maxWrite, cut
	// between frames: 100 frames of 60 bytes and a length byte, 67 to a
	// write.
	var large [][]byte
	for range 100 {
		large = append(large, bytes.Repeat([]byte{'y'}, 60))
	}
	if err := sd.SendAll(ctx, large); err != nil {
		t.Fatal(err)
	}
	want = append(want, large...)
	waitFor(t, "the large burst", func() bool { f, _ := rb.seen(); return len(f) == len(want) })
	if st := ma.Stats(); st.Writes != 5 {
		t.Errorf("a burst of 6,100 bytes took %d writes, want 2", st.Writes-3)
	}
	if err := sd.SendAll(ctx, [][]byte{[]byte("fits"), make([]byte, 65)}); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("a batch with an oversized frame: err = %v, want ErrFrameTooLarge", err)
	}
	if st := ma.Stats(); st.FramesSent != uint64(len(want)) {
		t.Errorf("after a refused batch FramesSent = %d, want %d", st.FramesSent, len(want))
	}
	got, _ = rb.seen()
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Error("the frames after the large burst are not those sent, in order")
	}
	if err := ma.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sd.SendAll(ctx, all); !errors.Is(err, ErrMessengerClosed) {
		t.Errorf("SendAll after Close: err = %v, want ErrMessengerClosed", err)
	}
}

// TestSendAllRefusedIsTakenBack: a batch to a peer whose machine refuses
// the connection fails whole and leaves nothing on the link to resend, as
// one frame does.
func TestSendAllRefusedIsTakenBack(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	a := tn.hosts[0]
	down := tn.hosts[1].ID()
	tn.hosts[1].Close() // in the book, refusing
	ma := NewMessenger(a, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
	t.Cleanup(func() { ma.Close() })
	sd, err := ma.Sender(down)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := sd.SendAll(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err == nil {
		t.Fatal("SendAll to a refusing peer succeeded")
	}
	sd.o.mu.Lock()
	defer sd.o.mu.Unlock()
	if n := sd.o.q.frames(); n != 0 {
		t.Errorf("%d frames left on the link after a refused batch, want 0", n)
	}
	if st := ma.Stats(); st.FramesSent != 0 {
		t.Errorf("FramesSent = %d after a refused batch, want 0", st.FramesSent)
	}
}

// TestDrainedAfterAPanic: a stream whose handler panics in the middle of a
// burst ends, and its handler is drained once more, so that what it held
// back for the burst is not left behind; the frame after the one that
// panicked comes on the link's next stream.
func TestDrainedAfterAPanic(t *testing.T) {
	rb, _, sd, ctx := burstPair(t, MessengerOptions{}, false)
	mb := rb.m
	if err := sd.Send(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first frame", func() bool { _, d := rb.seen(); return len(d) == 1 })
	if err := sd.SendAll(ctx, [][]byte{[]byte("second"), []byte("boom"), []byte("third")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the frame after the panic", func() bool { f, _ := rb.seen(); return len(f) == 3 })
	if n := mb.Stats().Errors; n != 1 {
		t.Errorf("%d errors, want the one panic", n)
	}
	// Drained after first; at the end of the stream that panicked, after
	// second; after third, on the next stream.
	if _, d := rb.seen(); !slices.Equal(d, []int{1, 2, 3}) {
		t.Errorf("drained after frames %v, want [1 2 3]", d)
	}
}
