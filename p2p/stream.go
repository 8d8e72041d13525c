package p2p

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	msmux "github.com/multiformats/go-multistream"
)

// Defaults for the zero values of MessengerOptions.
const (
	// DefaultMaxFrameSize is the default bound on a frame, in bytes.
	DefaultMaxFrameSize = 4 << 20
	// DefaultWriteTimeout is the default deadline for writing one frame.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultReadTimeout is the default deadline for the rest of a frame once
	// its first byte has arrived.
	DefaultReadTimeout = 10 * time.Second
	// DefaultIdleTimeout is the default time after which (up to twice
	// which) an inbound stream without frames is closed.
	DefaultIdleTimeout = 10 * time.Minute
)

const (
	// streamBufferSize is the size of each stream's bufio reader or writer.
	streamBufferSize = 16 << 10
	// deadlineSlack: a deadline already set on a stream is reused while at
	// least 7/8 of its period remains, so a busy stream does not re-arm a
	// timer for every frame. Every frame write (and every wait for a frame)
	// still gets between 7/8 and all of its timeout.
	deadlineSlack = 8
)

// ErrUnknownPeer is returned (wrapped) when sending to a peer that is not in
// the address book.
var ErrUnknownPeer = errors.New("peer is not in the address book")

// ErrMessengerClosed is returned (wrapped) by Send after Close.
var ErrMessengerClosed = errors.New("messenger is closed")

// MessengerOptions tunes a Messenger. Zero fields take the defaults.
type MessengerOptions struct {
	// MaxFrameSize bounds frames sent and received; default DefaultMaxFrameSize.
	MaxFrameSize int
	// WriteTimeout is the deadline for writing one frame; default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ReadTimeout is the deadline for receiving the rest of a frame once its
	// first byte is in; default DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout closes an inbound stream that carries no frame for this
	// long, or up to twice this long (the deadline is not moved for every
	// frame; see readLoop); default DefaultIdleTimeout. A sender retires its own outbound
	// stream after IdleTimeout/2 of silence and opens a new one on the next
	// Send, so that it never writes into a stream the receiver is closing.
	IdleTimeout time.Duration
	// BorrowedFrames hands the handler each frame that fits in a stream's
	// read buffer (16 KiB) in that buffer, valid only until the handler
	// returns, instead of a copy of its own: a handler that keeps a frame,
	// or any part of one, copies it. It spares an allocation and a copy
	// per frame received, which a busy session (SAMBA's controller
	// receives a hundred frames a step) feels.
	BorrowedFrames bool
	// NewStreamHandler, if set, gives every inbound stream a frame handler
	// of its own: it is called once, when the stream from peer from opens,
	// and the function it returns gets that stream's frames in place of the
	// messenger's handler (which may then be nil). A handler that keeps
	// state from one frame to the next, such as what the last frame's
	// header decoded to, needs no lock: one goroutine reads a stream.
	NewStreamHandler func(from peer.ID) func(frame []byte)
	// Logger receives log output; nil means the host's logger.
	Logger *slog.Logger
}

// Validate reports a negative option.
func (o MessengerOptions) Validate() error {
	switch {
	case o.MaxFrameSize < 0:
		return fmt.Errorf("messenger options: negative MaxFrameSize %d", o.MaxFrameSize)
	case o.WriteTimeout < 0:
		return fmt.Errorf("messenger options: negative WriteTimeout %v", o.WriteTimeout)
	case o.ReadTimeout < 0:
		return fmt.Errorf("messenger options: negative ReadTimeout %v", o.ReadTimeout)
	case o.IdleTimeout < 0:
		return fmt.Errorf("messenger options: negative IdleTimeout %v", o.IdleTimeout)
	}
	return nil
}

// MessengerStats are a Messenger's counters since it was created.
type MessengerStats struct {
	// FramesSent counts frames written by Send.
	FramesSent uint64
	// FramesReceived counts well-formed frames handed to the handler.
	FramesReceived uint64
	// BytesSent counts frame payload bytes sent, without length prefixes.
	BytesSent uint64
	// BytesReceived counts frame payload bytes received, without length prefixes.
	BytesReceived uint64
	// Errors counts failed writes, failed stream opens and inbound streams
	// reset for a malformed, oversized, truncated or slow frame. The first
	// write of a Send into a stream whose connection had closed is not
	// counted: Send moves to a live connection and writes again.
	Errors uint64
}

// Messenger exchanges frames with address-book peers over long-lived direct
// streams of one protocol: one outbound stream per remote peer, opened on the
// first Send and reused, and one inbound stream per remote sender.
type Messenger struct {
	h       *Host
	id      protocol.ID
	handler func(from peer.ID, frame []byte)
	opts    MessengerOptions
	logger  *slog.Logger

	framesSent, framesReceived atomic.Uint64
	bytesSent, bytesReceived   atomic.Uint64
	errs                       atomic.Uint64

	mu      sync.Mutex  // guards out and streams, and writes of closed
	closed  atomic.Bool // set under mu; read without it by Sender.Send
	out     map[peer.ID]*outStream
	streams map[network.Stream]struct{} // every open stream, inbound and outbound, for Close
	loops   sync.WaitGroup              // inbound read loops
}

// outStream is the outbound stream to one peer.
type outStream struct {
	mu        sync.Mutex // serializes Sends to the peer; guards the fields below
	s         network.Stream
	w         *bufio.Writer
	deadline  time.Time // write deadline currently set on s
	lastWrite time.Time
}

// NewMessenger registers a stream handler for protocol id (versioned, e.g.
// "/bandit/session/1.0.0") on h. handler is called for every frame received
// from an address-book peer, with the peer ID of its address-book entry (the
// very string given to NewHost, so comparing it with that one is cheap):
// synchronously from that sender's read loop, so
// frames of one sender arrive in order, and a slow handler slows that sender
// (bounded by the sender's WriteTimeout). handler owns the frame slice,
// unless opts.BorrowedFrames lends it only for the call; what is said here
// of handler holds for the per-stream handlers of opts.NewStreamHandler too.
// handler must not call Close. NewMessenger panics on options that fail
// Validate, or with neither handler nor opts.NewStreamHandler (programming
// errors).
func NewMessenger(h *Host, id protocol.ID, handler func(from peer.ID, frame []byte), opts MessengerOptions) *Messenger {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	if handler == nil && opts.NewStreamHandler == nil {
		panic("p2p: NewMessenger with no handler")
	}
	opts.MaxFrameSize = cmp.Or(opts.MaxFrameSize, DefaultMaxFrameSize)
	opts.WriteTimeout = cmp.Or(opts.WriteTimeout, DefaultWriteTimeout)
	opts.ReadTimeout = cmp.Or(opts.ReadTimeout, DefaultReadTimeout)
	opts.IdleTimeout = cmp.Or(opts.IdleTimeout, DefaultIdleTimeout)
	logger := opts.Logger
	if logger == nil {
		logger = h.logger
	}
	m := &Messenger{
		h:       h,
		id:      id,
		handler: handler,
		opts:    opts,
		logger:  logger.With("protocol", string(id)),
		out:     make(map[peer.ID]*outStream),
		streams: make(map[network.Stream]struct{}),
	}
	h.h.SetStreamHandler(id, m.handleStream)
	return m
}

// Stats returns the messenger's counters.
func (m *Messenger) Stats() MessengerStats {
	return MessengerStats{
		FramesSent:     m.framesSent.Load(),
		FramesReceived: m.framesReceived.Load(),
		BytesSent:      m.bytesSent.Load(),
		BytesReceived:  m.bytesReceived.Load(),
		Errors:         m.errs.Load(),
	}
}

// Send writes frame to peer to on the outbound stream, opening it (and
// dialing the peer) within ctx if needed; it is Sender(to) and its Send. On a
// write error the stream is reset and discarded and the frame is retried once
// on a new stream; a stream whose connection turns out to have closed (one of
// two connections formed by a simultaneous dial, say) is replaced once more
// without counting as that failure, since the connection went away under it.
// A nil error means the frame was handed to the connection, not that the peer
// processed it. Opening the stream (dialing if needed) and each frame write
// are bounded by WriteTimeout, and by ctx's deadline if earlier: a ctx
// without a deadline is fine, and saves the caller a timer per Send.
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

func (m *Messenger) tooLarge(to peer.ID, frame []byte) error {
	return fmt.Errorf("sending to %s on %s: a %d-byte frame: %w (limit %d bytes)", m.h.describe(to), m.id, len(frame), ErrFrameTooLarge, m.opts.MaxFrameSize)
}

// send writes frame to peer to through its outbound state o.
func (m *Messenger) send(ctx context.Context, to peer.ID, o *outStream, frame []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
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
			if err := m.open(ctx, to, o); err != nil {
				m.errs.Add(1)
				if writeErr != nil {
					return fmt.Errorf("sending to %s on %s: writing failed (%v), then reopening the stream failed: %w", m.h.describe(to), m.id, writeErr, err)
				}
				return fmt.Errorf("sending to %s on %s: %w", m.h.describe(to), m.id, err)
			}
			now = time.Now()
		}
		// A stream whose connection is gone or going (closed by either
		// side, e.g. one of two connections formed by a simultaneous
		// dial) is never trusted with a frame: a write into it fails, or
		// succeeds into a buffer that will not leave, and either way the
		// frame goes again on a new stream on a live connection. One look
		// at the connection, after the write, covers both cases.
		writeErr = o.write(ctx, now, frame, m.opts)
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
			m.framesSent.Add(1)
			m.bytesSent.Add(uint64(len(frame)))
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
	return fmt.Errorf("sending a %d-byte frame to %s on %s: %w", len(frame), m.h.describe(to), m.id, writeErr)
}

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
		o = &outStream{}
		m.out[to] = o
	}
	return o, nil
}

// open opens a new outbound stream into o, within ctx and WriteTimeout.
// o.mu is held.
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
	// This side never reads from an outbound stream.
	s.CloseRead()
	if o.w == nil {
		o.w = bufio.NewWriterSize(s, streamBufferSize)
	} else {
		o.w.Reset(s)
	}
	o.s = s
	o.deadline = time.Time{}
	o.lastWrite = time.Now()
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
		if err := m.h.connect(ctx, to); err != nil {
			return nil, err
		}
	}
	var lastErr error
	for range openAttempts {
		c := m.h.bestConn(to)
		if c == nil {
			if err := m.h.connect(ctx, to); err != nil {
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

// write writes and flushes one frame. o.mu is held.
func (o *outStream) write(ctx context.Context, now time.Time, frame []byte, opts MessengerOptions) error {
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
	if err := WriteFrame(o.w, frame, len(frame)); err != nil {
		o.w.Reset(o.s)
		return err
	}
	if err := o.w.Flush(); err != nil {
		o.w.Reset(o.s)
		return err
	}
	return nil
}

// forget drops s from the set of streams Close resets.
func (m *Messenger) forget(s network.Stream) {
	m.mu.Lock()
	delete(m.streams, s)
	m.mu.Unlock()
}

// handleStream serves one inbound stream.
func (m *Messenger) handleStream(s network.Stream) {
	from, known := m.h.bookID(s.Conn().RemotePeer())
	if !known {
		m.logger.Warn("refusing a stream from a peer that is not in the address book", "peer", from.String())
		s.Reset()
		return
	}
	m.mu.Lock()
	if m.closed.Load() {
		m.mu.Unlock()
		s.Reset()
		return
	}
	m.streams[s] = struct{}{}
	m.loops.Add(1)
	m.mu.Unlock()
	defer m.loops.Done()
	defer m.forget(s)
	m.readLoop(from, s)
}

// readLoop reads frames from s and hands them to the handler until the stream
// ends or misbehaves.
func (m *Messenger) readLoop(from peer.ID, s network.Stream) {
	handle := func(frame []byte) { m.handler(from, frame) }
	if m.opts.NewStreamHandler != nil {
		handle = m.opts.NewStreamHandler(from)
	}
	br := bufio.NewReaderSize(s, streamBufferSize)
	idle, readTimeout := m.opts.IdleTimeout, m.opts.ReadTimeout
	// The idle deadline is set for IdleTimeout and left alone while frames
	// come (moving it would read the clock for every frame): when it
	// passes, the stream is idle only if no frame came since it was set,
	// and is otherwise given another IdleTimeout.
	armed := false // the idle deadline is set
	heard := false // a frame came since it was set
	for {
		// Wait for the first byte of the next frame.
		if !armed {
			if err := s.SetReadDeadline(time.Now().Add(idle)); err != nil {
				m.logger.Debug("cannot set a read deadline; closing the stream", "peer", m.h.describe(from), "err", err)
				s.Reset()
				return
			}
			armed, heard = true, false
		}
		if _, err := br.Peek(1); err != nil {
			if heard && isTimeout(err) {
				armed = false
				continue
			}
			m.endStream(from, s, err, true)
			return
		}
		// Unless the whole frame is already buffered, give its remainder
		// ReadTimeout to arrive.
		if !frameBuffered(br) {
			armed = false
			if err := s.SetReadDeadline(time.Now().Add(readTimeout)); err != nil {
				s.Reset()
				return
			}
		}
		var (
			frame    []byte
			borrowed bool
			err      error
		)
		if m.opts.BorrowedFrames {
			frame, borrowed, err = BorrowFrame(br, m.opts.MaxFrameSize)
		} else {
			frame, err = ReadFrame(br, m.opts.MaxFrameSize)
		}
		if err != nil {
			m.endStream(from, s, err, false)
			return
		}
		m.framesReceived.Add(1)
		m.bytesReceived.Add(uint64(len(frame)))
		if !m.handleFrame(handle, from, frame) {
			// The handler's state for this stream (what it remembers
			// of the last frame) cannot be trusted after a panic, nor
			// the reader's: the stream is reset, and the peer's next
			// frame opens a new one with a new handler.
			s.Reset()
			return
		}
		if borrowed {
			br.Discard(len(frame))
		}
		heard = true
	}
}

// handleFrame calls handle on one frame and reports whether it returned.
// A panic in the handler is recovered, logged with its stack and counted
// in Errors: whatever a peer sends, a handler's bug ends one stream, never
// the process.
func (m *Messenger) handleFrame(handle func([]byte), from peer.ID, frame []byte) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			m.errs.Add(1)
			m.logger.Error("internal error handling a frame; resetting the stream", "peer", m.h.describe(from),
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	handle(frame)
	return true
}

// frameBuffered reports whether br holds a complete frame.
func frameBuffered(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Buffered())
	size, n := binary.Uvarint(buf)
	return n > 0 && size <= uint64(len(buf)-n)
}

// endStream closes an inbound stream after a read error, logging why.
// boundary reports whether the error happened between frames.
// isTimeout reports a read that failed at its deadline.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &te) && te.Timeout()
}

func (m *Messenger) endStream(from peer.ID, s network.Stream, err error, boundary bool) {
	who := m.h.describe(from)
	timeout := isTimeout(err)
	switch {
	case boundary && errors.Is(err, io.EOF):
		m.logger.Debug("peer closed its stream", "peer", who)
		s.Close()
	case boundary && timeout:
		m.logger.Debug("closing an idle stream", "peer", who, "idle_timeout", m.opts.IdleTimeout)
		s.Reset()
	case errors.Is(err, network.ErrReset) || m.isClosed():
		m.logger.Debug("stream was reset", "peer", who, "err", err)
		s.Reset()
	case timeout:
		m.errs.Add(1)
		m.logger.Warn("resetting stream: a frame did not arrive completely in time", "peer", who, "read_timeout", m.opts.ReadTimeout)
		s.Reset()
	case errors.Is(err, ErrFrameTooLarge), errors.Is(err, ErrFrameMalformed), errors.Is(err, io.ErrUnexpectedEOF):
		m.errs.Add(1)
		m.logger.Warn("resetting stream: bad frame from peer", "peer", who, "reason", err)
		s.Reset()
	default:
		m.logger.Debug("stream read failed", "peer", who, "err", err)
		s.Reset()
	}
}

func (m *Messenger) isClosed() bool { return m.closed.Load() }

// Close removes the stream handler, resets every stream of the messenger and
// waits for the inbound read loops to end. Send fails afterwards. It must not
// be called from the handler.
func (m *Messenger) Close() error {
	m.mu.Lock()
	if m.closed.Load() {
		m.mu.Unlock()
		return nil
	}
	m.closed.Store(true)
	streams := make([]network.Stream, 0, len(m.streams))
	for s := range m.streams {
		streams = append(streams, s)
	}
	clear(m.streams)
	m.mu.Unlock()
	m.h.h.RemoveStreamHandler(m.id)
	for _, s := range streams {
		if s.Stat().Direction == network.DirOutbound {
			// Close, not reset, what we send on: frames already written — a
			// stopping daemon's last words, such as an Abort — must reach
			// the peer rather than be discarded with the stream.
			s.SetDeadline(time.Now().Add(closeGrace))
			if err := s.Close(); err == nil {
				continue
			}
		}
		s.Reset()
	}
	m.loops.Wait()
	return nil
}

// closeGrace bounds how long Close waits to hand the last frames of an
// outbound stream to the connection.
const closeGrace = time.Second
