package p2p

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// The receiver's side of a link (see link.go).

const (
	// ackDelay bounds how long a frame waits for its acknowledgement. An
	// acknowledgement that the count below does not trigger is written by
	// a timer, at a moment of its own: on a stream that carries a frame
	// every few milliseconds (SAMBA's controller and data owners at K =
	// 100) each one wakes an idle process twice, here and at the sender,
	// and that wake-up costs more CPU than the frame itself
	// (BenchmarkFrameCPU/pace=4ms: 20 ms → 200 ms took the Messenger from
	// 1.17–1.31 to 1.06–1.10 of a raw stream's CPU per frame). It stays
	// well under watchdogTick, so a link that acknowledges is never seen
	// stalled, and under DefaultStallTimeout; the send window, whose bytes
	// ackEveryBytes acknowledges at once, is far above what a stream
	// carries in ackDelay at such a pace.
	ackDelay = 200 * time.Millisecond
	// ackEvery: a stream acknowledges at once after this many frames, or
	// this many bytes, since its last acknowledgement.
	ackEvery      = 64
	ackEveryBytes = 256 << 10
)

// inLink is what a receiver knows of a sender's link: which one it is and
// the next frame it awaits. Every inbound stream from the sender shares it,
// so a frame that a resend brings on a new stream while the old one still
// holds it reaches the handler once.
type inLink struct {
	mu   sync.Mutex // held while a frame is checked and handed over
	id   uint64
	next uint64 // the next frame to hand to the handler

	acked atomic.Uint64 // next, for the streams' acknowledgements
}

// linkFrom returns the receiver's state of peer from's link, made on first
// use.
func (m *Messenger) linkFrom(from peer.ID) *inLink {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.links[from]
	if l == nil {
		l = &inLink{}
		m.links[from] = l
	}
	return l
}

// join starts a stream of link id whose first frame is seq. A new link ID
// restarts the count at seq; a known one must not skip frames.
func (l *inLink) join(id, seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.id != id || l.next == 0 {
		l.id, l.next = id, seq
		l.acked.Store(seq)
		return nil
	}
	if seq > l.next {
		return fmt.Errorf("%w: the stream starts at frame %d, but frame %d never came", ErrFrameMalformed, seq, l.next)
	}
	return nil
}

// acker writes one inbound stream's acknowledgements: at once after
// ackEvery frames or ackEveryBytes bytes, and otherwise within ackDelay of
// the first frame it has not acknowledged.
type acker struct {
	m     *Messenger
	s     network.Stream
	l     *inLink
	timer *time.Timer

	frames, bytes int         // since the last acknowledgement by count; the reader's own
	armed         atomic.Bool // the timer will flush

	mu   sync.Mutex // serializes writes: the reader's and the timer's
	sent uint64     // the last acknowledgement written
	buf  [binary.MaxVarintLen64]byte
}

func newAcker(m *Messenger, s network.Stream, l *inLink) *acker {
	a := &acker{m: m, s: s, l: l}
	a.timer = time.AfterFunc(time.Hour, func() {
		a.armed.Store(false)
		a.flush()
	})
	a.timer.Stop()
	return a
}

// received notes a frame of size bytes that reached the handler (or was a
// copy of one that had), after the link counted it.
func (a *acker) received(size int) {
	a.frames++
	a.bytes += size
	switch {
	case a.frames >= ackEvery || a.bytes >= ackEveryBytes:
		a.frames, a.bytes = 0, 0
		a.flush()
	case !a.armed.Load():
		// The timer, once it has disarmed, flushes what the link counted
		// by then, this frame included.
		a.armed.Store(true)
		a.timer.Reset(ackDelay)
	}
}

// flush writes the link's acknowledgement if it moved. A failed write
// resets the stream: its sender will resend on another.
func (a *acker) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.l.acked.Load()
	if v <= a.sent {
		return
	}
	n := binary.PutUvarint(a.buf[:], v)
	a.s.SetWriteDeadline(time.Now().Add(a.m.opts.WriteTimeout))
	if _, err := a.s.Write(a.buf[:n]); err != nil {
		a.m.logger.Debug("could not acknowledge frames; resetting the stream", "err", err)
		a.s.Reset()
		return
	}
	a.sent = v
}

// stop ends the acknowledgements when the stream ends.
func (a *acker) stop() { a.timer.Stop() }
