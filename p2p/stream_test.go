package p2p

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
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

func TestNewMessengerWithoutHandlerPanics(t *testing.T) {
	tn := newTestNet(t, 1, nil)
	defer func() {
		if recover() == nil {
			t.Fatal("NewMessenger with neither a handler nor NewStreamHandler did not panic")
		}
	}()
	NewMessenger(tn.hosts[0], testProto, nil, MessengerOptions{})
}
