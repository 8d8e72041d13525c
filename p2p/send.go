package p2p

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	msmux "github.com/multiformats/go-multistream"
)

// Send writes frame to peer to on the outbound stream, opening it (and
// dialing the peer) within ctx if needed; it is Sender(to) and its Send.
// The frame joins the link to the peer (link.go): a nil error means the
// link took it, and the peer's handler gets it once, in order — resent on a
// new stream if the one it went out on ends before the peer acknowledges
// it — unless the link gives up on it (MessengerOptions.OnGiveUp). Send
// fails when the frame is too large, the send window stays full, or the
// peer refuses it (see sendFailed). Opening the stream (dialing if needed)
// and each frame write are bounded by WriteTimeout, and by ctx's deadline
// if earlier: a ctx without a deadline is fine, and saves the caller a
// timer per Send.
func (m *Messenger) Send(ctx context.Context, to peer.ID, frame []byte) error {
	if len(frame) > m.opts.MaxFrameSize {
		return m.tooLarge(to, frame)
	}
	o, err := m.outFor(to)
	if err != nil {
		return fmt.Errorf("sending to %s on %s: %w", m.h.describe(to), m.id, err)
	}
	return m.send(ctx, to, o, frame)
}

// Sender is a Messenger's outbound side to one peer: Send without looking
// the peer up. A caller that sends to the same peers over and over (a
// session's parties) keeps their Senders; each Send then skips the
// messenger's lock and its map of peers. A Sender is safe for concurrent use and stays valid after
// the messenger closes (Send then fails with ErrMessengerClosed).
type Sender struct {
	m  *Messenger
	to peer.ID
	o  *outStream
}

// Sender returns the sender to address-book peer to; it fails with
// ErrUnknownPeer (wrapped) for any other peer and ErrMessengerClosed after
// Close. Every Sender to the same peer shares one outbound stream.
func (m *Messenger) Sender(to peer.ID) (*Sender, error) {
	o, err := m.outFor(to)
	if err != nil {
		return nil, fmt.Errorf("sending to %s on %s: %w", m.h.describe(to), m.id, err)
	}
	return &Sender{m: m, to: to, o: o}, nil
}

// Send writes frame to the sender's peer, as Messenger.Send does.
func (sd *Sender) Send(ctx context.Context, frame []byte) error {
	m := sd.m
	if len(frame) > m.opts.MaxFrameSize {
		return m.tooLarge(sd.to, frame)
	}
	if m.closed.Load() {
		return fmt.Errorf("sending to %s on %s: %w", m.h.describe(sd.to), m.id, ErrMessengerClosed)
	}
	return m.send(ctx, sd.to, sd.o, frame)
}

// SendAll writes frames to the sender's peer, in order, as that many Sends
// would, but with one write: the stream carries them in one muxer frame,
// one encryption and one system call where Sends would pay each per frame.
// The link takes them all or none: SendAll fails as a Send of them all
// would, and then none of them reaches the peer.
func (sd *Sender) SendAll(ctx context.Context, frames [][]byte) error {
	m := sd.m
	for _, f := range frames {
		if len(f) > m.opts.MaxFrameSize {
			return m.tooLarge(sd.to, f)
		}
	}
	if len(frames) == 0 {
		return nil
	}
	if m.closed.Load() {
		return fmt.Errorf("sending to %s on %s: %w", m.h.describe(sd.to), m.id, ErrMessengerClosed)
	}
	return m.send(ctx, sd.to, sd.o, frames...)
}

func (m *Messenger) tooLarge(to peer.ID, frame []byte) error {
	return fmt.Errorf("sending to %s on %s: a %d-byte frame: %w (limit %d bytes)", m.h.describe(to), m.id, len(frame), ErrFrameTooLarge, m.opts.MaxFrameSize)
}

// send queues frames on the link to peer to and writes them, with one
// write. Once they have been written, or tried, the link owns them: should
// their stream end before the peer acknowledges them, resendLoop sends them
// again on a new stream, and send reports success. Send fails only for
// frames the link did not take: the send window stayed full, or the peer
// refused them with nothing else on its way to it (sendFailed; the frames
// are then dropped). A stream whose connection is found closed after a
// write is replaced once without counting as a failed try.
func (m *Messenger) send(ctx context.Context, to peer.ID, o *outStream, frames ...[]byte) error {
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	m.trim(o)
	if err := m.waitWindow(ctx, to, o, size); err != nil {
		m.errs.Add(1)
		return err
	}
	// Only the first push may move the queue's frames to the front
	// (push): the offset of the first frame holds for them all.
	off := o.q.push(frames[0])
	for _, f := range frames[1:] {
		o.q.push(f)
	}
	o.pushed.Store(o.q.next)
	if o.resending {
		// The link is being reopened: the frames go with the others.
		m.accepted(frames)
		return nil
	}
	var writeErr error
	moved := false // a stream was replaced because its connection had closed
	for attempt := 0; attempt < 2; attempt++ {
		now := time.Now()
		if o.s != nil && now.Sub(o.lastWrite) > m.opts.IdleTimeout/2 {
			// The receiver may be about to close this stream for
			// idleness; retire it cleanly rather than race it.
			m.forget(o.s)
			o.s.Close()
			o.s = nil
		}
		if o.s == nil {
			// open writes every frame not acknowledged, this one too.
			if err := m.open(ctx, to, o); err != nil {
				m.errs.Add(1)
				if writeErr != nil {
					err = fmt.Errorf("writing failed (%v), then reopening the stream failed: %w", writeErr, err)
				}
				return m.sendFailed(to, o, off, frames, err)
			}
			m.writes.Add(1) // open wrote the frames with the others unacknowledged
			writeErr = nil
		} else {
			o.written = o.q.next
			var writes int
			writes, writeErr = o.writeFrames(ctx, now, o.q.buf[off:], m.opts)
			m.writes.Add(uint64(writes))
		}
		// A stream whose connection is gone or going (closed by either
		// side, e.g. one of two connections formed by a simultaneous
		// dial) is never trusted with a frame: a write into it fails, or
		// succeeds into a buffer that will not leave, and either way the
		// frame goes again on a new stream on a live connection. One look
		// at the connection, after the write, covers both cases.
		if o.s.Conn().IsClosed() {
			m.dropConnLost(to, o)
			if !moved {
				// Not an error of ours or the peer's: the connection
				// moved. This try does not count.
				moved = true
				attempt--
				continue
			}
			if writeErr == nil {
				writeErr = errConnClosed
			}
			m.errs.Add(1)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if writeErr == nil {
			m.accepted(frames)
			m.trim(o) // what was acknowledged meanwhile (ackLoop could not take o.mu)
			return nil
		}
		m.errs.Add(1)
		m.forget(o.s)
		o.s.Reset()
		o.s = nil
		if ctx.Err() != nil {
			break
		}
	}
	return m.sendFailed(to, o, off, frames, writeErr)
}

// accepted counts frames the link took.
func (m *Messenger) accepted(frames [][]byte) {
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	m.framesSent.Add(uint64(len(frames)))
	m.bytesSent.Add(uint64(size))
}

// sendFailed ends a Send whose frames, pushed from off, could not be
// written because of err. Frames alone on the link and never written are
// taken back, and Send fails, if the peer refused them (refused): its daemon is
// gone from a machine that answers, or does not speak the protocol, or it
// took no stream the last maxFruitless times (o.refusing: its address book
// no longer lists us, say).
// Otherwise — a network that does not answer (a cut), a connection lost
// while the stream opened, older frames still unacknowledged — the frame
// stays, and resendLoop sends it once the peer can be reached, within
// ResendTimeout: whether a session waits that long for the peer is for
// its own timeouts to say. o.mu is held.
func (m *Messenger) sendFailed(to peer.ID, o *outStream, off int, frames [][]byte, err error) error {
	n := uint64(len(frames))
	if o.q.frames() == n && o.written < o.q.next && (refused(err) || o.refusing.Load()) {
		o.q.next -= n
		o.q.buf = o.q.buf[:off]
		o.pushed.Store(o.q.next)
		if !refused(err) {
			err = fmt.Errorf("%w (and the peer took no stream the last %d times)", err, maxFruitless)
		}
		return fmt.Errorf("sending to %s on %s: %w", m.h.describe(to), m.id, err)
	}
	m.accepted(frames)
	m.logger.Info("could not write to a peer; resending what it has not acknowledged once it is back",
		"peer", m.h.describe(to), "frames", o.q.frames(), "err", err)
	m.startResend(to, o)
	return nil
}

// refused reports an error that says the peer will not take the frame:
// its machine refused the connection (no daemon listens), or its daemon
// does not speak the protocol.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, msmux.ErrNotSupported[protocol.ID]{}) ||
		errors.Is(err, ErrUnknownPeer) || errors.Is(err, ErrMessengerClosed)
}

// waitWindow waits, within ctx and the write timeout, until a frame of
// size bytes fits in the send window. o.mu is held; acknowledgements come
// without it.
func (m *Messenger) waitWindow(ctx context.Context, to peer.ID, o *outStream, size int) error {
	if o.q.size()+size <= m.opts.SendWindow || o.q.frames() == 0 {
		return nil
	}
	t := time.NewTimer(m.opts.WriteTimeout)
	defer t.Stop()
	for o.q.size()+size > m.opts.SendWindow && o.q.frames() > 0 {
		select {
		case <-o.ackc:
			m.trim(o)
		case <-t.C:
			return fmt.Errorf("sending to %s on %s: %w (%d bytes in %d frames unacknowledged for %v; send window %d bytes)",
				m.h.describe(to), m.id, ErrSendWindowFull, o.q.size(), o.q.frames(), m.opts.WriteTimeout, m.opts.SendWindow)
		case <-ctx.Done():
			return fmt.Errorf("sending to %s on %s: waiting for room in the send window: %w", m.h.describe(to), m.id, ctx.Err())
		case <-m.done:
			return fmt.Errorf("sending to %s on %s: %w", m.h.describe(to), m.id, ErrMessengerClosed)
		}
	}
	return nil
}

// ErrSendWindowFull is returned (wrapped) by Send when the peer has not
// acknowledged enough of what it was sent to make room for the frame.
var ErrSendWindowFull = errors.New("the peer acknowledges too slowly: the send window is full")

// outFor returns the outbound state for address-book peer to, creating it.
func (m *Messenger) outFor(to peer.ID) (*outStream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil, ErrMessengerClosed
	}
	o, ok := m.out[to]
	if !ok {
		if !m.h.Known(to) {
			return nil, ErrUnknownPeer
		}
		o = &outStream{link: newLinkID(), q: newSendQueue(), written: 1, ackc: make(chan struct{}, 1)}
		o.pushed.Store(1)
		o.acked.Store(1)
		m.out[to] = o
	}
	return o, nil
}

// open opens a new outbound stream into o, within ctx and WriteTimeout,
// and writes on it the link's header and every frame the peer has not
// acknowledged. o.mu is held.
func (m *Messenger) open(ctx context.Context, to peer.ID, o *outStream) error {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > m.opts.WriteTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.WriteTimeout)
		defer cancel()
	}
	s, err := m.newStream(ctx, to)
	if err != nil {
		return fmt.Errorf("opening a stream: %w", err)
	}
	m.mu.Lock()
	if m.closed.Load() {
		m.mu.Unlock()
		s.Reset()
		return ErrMessengerClosed
	}
	m.streams[s] = struct{}{}
	m.mu.Unlock()
	o.s = s
	o.deadline = time.Time{}
	o.lastWrite = time.Now()
	m.trim(o)
	o.ackedAtOpen = o.acked.Load()
	// Acknowledgements come back on the stream.
	go m.ackLoop(to, o, s)
	if again := min(o.written, o.q.next) - o.q.first; again > 0 {
		m.resent.Add(again)
	}
	o.written = o.q.next
	o.hdr = appendHeader(o.hdr[:0], o.link, o.q.first)
	err = o.write(ctx, o.lastWrite, o.hdr, m.opts)
	if err == nil && o.q.frames() > 0 {
		err = o.write(ctx, o.lastWrite, o.q.pending(), m.opts)
	}
	if err != nil {
		m.forget(s)
		s.Reset()
		o.s = nil
		return fmt.Errorf("writing on a new stream: %w", err)
	}
	return nil
}

// openAttempts bounds how many connections open tries when connections to the
// peer keep closing under it.
const openAttempts = 3

// newStream opens a stream of the messenger's protocol to peer to, dialing
// within ctx if there is no connection. The stream is opened on the
// connection both peers prefer (preferredConn), the one that survives when
// both dialed each other at once, and the protocol is
// negotiated before newStream returns, so a stream the peer refuses (or loses
// with its connection) fails here instead of swallowing the first frame.
func (m *Messenger) newStream(ctx context.Context, to peer.ID) (network.Stream, error) {
	if !m.h.Connected(to) {
		if err := m.h.dialForStream(ctx, to); err != nil {
			return nil, err
		}
	}
	var lastErr error
	for range openAttempts {
		c := m.h.bestConn(to)
		if c == nil {
			if err := m.h.dialForStream(ctx, to); err != nil {
				return nil, err
			}
			continue
		}
		s, err := m.negotiate(ctx, c)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !c.IsClosed() || ctx.Err() != nil {
			break
		}
	}
	if lastErr == nil {
		lastErr = network.ErrNoConn
	}
	return nil, lastErr
}

// negotiate opens a stream on c and selects the messenger's protocol on it,
// within ctx and the write timeout.
func (m *Messenger) negotiate(ctx context.Context, c network.Conn) (network.Stream, error) {
	s, err := c.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.SetProtocol(m.id); err != nil {
		s.Reset()
		return nil, err
	}
	deadline := time.Now().Add(m.opts.WriteTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	s.SetDeadline(deadline)
	errc := make(chan error, 1)
	go func() { errc <- msmux.SelectProtoOrFail(m.id, s) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.Reset()
		<-errc
		err = ctx.Err()
	}
	if err != nil {
		s.Reset()
		return nil, fmt.Errorf("negotiating %s: %w", m.id, err)
	}
	s.SetDeadline(time.Time{})
	return s, nil
}

// dropConnLost discards o's stream after its connection closed. o.mu is held.
func (m *Messenger) dropConnLost(to peer.ID, o *outStream) {
	m.logger.Debug("the stream's connection closed; reopening on another connection", "peer", m.h.describe(to))
	m.forget(o.s)
	o.s.Reset()
	o.s = nil
}

// errConnClosed reports a frame written while its stream's connection closed.
var errConnClosed = errors.New("the stream's connection closed")

// maxWrite bounds the bytes of one write of several frames (SendAll). The
// stream's encryption seals a write as one message, which the receiver can
// open only once all of it has come: a write of a whole burst would keep
// its first frames from the receiver until its last byte arrived, and, on
// a slow link, serialize the receiver's work on them with their transfer
// (at 20 Mbit/s, 45 KB of SAMBA's lists are 18 ms). 4 KiB costs the
// receiver's pipeline at most 1.6 ms at that rate and still carries a
// dozen small frames a write.
const maxWrite = 4 << 10

// writeFrames writes b, whole encoded frames (length prefixes included), on
// o's stream in writes of at most maxWrite bytes cut between frames (a
// larger frame goes alone), and returns how many writes it made. o.mu is
// held.
func (o *outStream) writeFrames(ctx context.Context, now time.Time, b []byte, opts MessengerOptions) (int, error) {
	writes := 0
	for len(b) > 0 {
		n := 0
		for n < len(b) {
			size, k := binary.Uvarint(b[n:])
			end := n + k + int(size)
			if n > 0 && end > maxWrite {
				break
			}
			n = end
		}
		if err := o.write(ctx, now, b[:n], opts); err != nil {
			return writes, err
		}
		writes++
		b = b[n:]
	}
	return writes, nil
}

// write writes b, one or more encoded frames (or a header), on o's stream.
// o.mu is held.
func (o *outStream) write(ctx context.Context, now time.Time, b []byte, opts MessengerOptions) error {
	deadline := o.deadline
	if left := deadline.Sub(now); left < opts.WriteTimeout-opts.WriteTimeout/deadlineSlack || left > opts.WriteTimeout {
		deadline = now.Add(opts.WriteTimeout)
	}
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if !deadline.Equal(o.deadline) {
		if err := o.s.SetWriteDeadline(deadline); err != nil {
			return fmt.Errorf("setting the write deadline: %w", err)
		}
		o.deadline = deadline
	}
	o.lastWrite = now
	_, err := o.s.Write(b)
	return err
}
