package p2p

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
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
	// DefaultResendTimeout is the default time a sender keeps trying to
	// resend the frames a lost connection left unacknowledged.
	DefaultResendTimeout = 2 * time.Minute
	// DefaultSendWindow is the default bound on the unacknowledged bytes
	// to one peer.
	DefaultSendWindow = 16 << 20
	// DefaultStallTimeout is the default time frames may go
	// unacknowledged before the watchdog pings their peer.
	DefaultStallTimeout = 5 * time.Second
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
	// and the StreamHandler it returns gets that stream's frames in place
	// of the messenger's handler (which may then be nil). A handler that
	// keeps state from one frame to the next, such as what the last frame's
	// header decoded to, needs no lock: one goroutine reads a stream.
	NewStreamHandler func(from peer.ID) StreamHandler
	// ResendTimeout is how long, after a stream to a peer ends with frames
	// it has not acknowledged, the messenger keeps reopening streams to
	// resend them; then it drops them (logging how many) and the next Send
	// starts a new link. Default DefaultResendTimeout.
	ResendTimeout time.Duration
	// SendWindow bounds the bytes sent to one peer and not yet
	// acknowledged: a Send over it waits up to WriteTimeout for
	// acknowledgements, then fails. It is raised to twice MaxFrameSize if
	// below. Default DefaultSendWindow.
	SendWindow int
	// StallTimeout is how long frames to a peer may go unacknowledged
	// before the watchdog (watchdog.go) pings the peer, and closes the
	// connection if it does not answer. Default DefaultStallTimeout.
	StallTimeout time.Duration
	// OnGiveUp, if set, is called (on a goroutine of its own) when the
	// messenger drops frames to peer to that it could not deliver: the
	// peer stayed out of reach for ResendTimeout, or refused the streams
	// that resent them; reason says which. Whoever waits on those frames
	// will not see them.
	OnGiveUp func(to peer.ID, frames uint64, reason string)
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
	case o.ResendTimeout < 0:
		return fmt.Errorf("messenger options: negative ResendTimeout %v", o.ResendTimeout)
	case o.SendWindow < 0:
		return fmt.Errorf("messenger options: negative SendWindow %d", o.SendWindow)
	case o.StallTimeout < 0:
		return fmt.Errorf("messenger options: negative StallTimeout %v", o.StallTimeout)
	}
	return nil
}

// MessengerStats are a Messenger's counters since it was created.
type MessengerStats struct {
	// FramesSent counts frames Send accepted, each once however often it
	// was written.
	FramesSent uint64
	// FramesReceived counts well-formed frames handed to the handler, each
	// once.
	FramesReceived uint64
	// FramesResent counts frames written again, on a new stream, because
	// the stream that carried them ended before they were acknowledged.
	FramesResent uint64
	// Duplicates counts frames received again after a resend and dropped.
	Duplicates uint64
	// FramesDropped counts frames given up on: still unacknowledged when
	// ResendTimeout passed, or when the peer kept resetting the streams
	// that resent them.
	FramesDropped uint64
	// Unacknowledged is the frames sent and not yet acknowledged, over
	// all peers, now: what the send queues hold.
	Unacknowledged uint64
	// Writes counts the writes that carried the frames Send and SendAll
	// accepted: one a Send, one a SendAll of several frames to one peer
	// (resends not included). FramesSent / Writes is how many frames a
	// write carried.
	Writes uint64
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
// first Send and reused, and one inbound stream per remote sender. The
// frames to a peer form a link (link.go): numbered, acknowledged, and sent
// again on a new stream when a connection is lost under them, so that the
// peer's handler gets each frame Send accepted once and in order for as
// long as the peer's messenger lives and is back within ResendTimeout.
type Messenger struct {
	h       *Host
	id      protocol.ID
	handler func(from peer.ID, frame []byte)
	opts    MessengerOptions
	logger  *slog.Logger

	framesSent, framesReceived atomic.Uint64
	writes                     atomic.Uint64
	bytesSent, bytesReceived   atomic.Uint64
	errs                       atomic.Uint64
	resent, dups, dropped      atomic.Uint64

	mu      sync.Mutex  // guards out, links and streams, and writes of closed
	closed  atomic.Bool // set under mu; read without it by Sender.Send
	done    chan struct{}
	out     map[peer.ID]*outStream
	links   map[peer.ID]*inLink         // the senders' links, by peer
	streams map[network.Stream]struct{} // every open stream, inbound and outbound, for Close
	loops   sync.WaitGroup              // inbound read loops
}

// outStream is the outbound side of the link to one peer: its stream, if
// one is open, and the frames the peer has not acknowledged.
type outStream struct {
	mu        sync.Mutex // serializes Sends to the peer; guards the fields below
	s         network.Stream
	deadline  time.Time // write deadline currently set on s
	lastWrite time.Time

	link    uint64    // the link's ID
	q       sendQueue // the frames the peer has not acknowledged
	written uint64    // the frames numbered below have been written (or tried) on some stream
	// resending says that a goroutine (resendLoop) reopens the link; Send
	// then only queues.
	resending bool
	// brokenAt is when the link lost its stream with frames
	// unacknowledged; zero while it has one.
	brokenAt time.Time
	// ackedAtOpen is what was acknowledged when s was opened, and
	// fruitless counts the streams in a row that ended without moving it
	// (the peer resets a frame it refuses, say).
	ackedAtOpen uint64
	fruitless   int
	connLosses  int    // streams in a row that ended with their connection, nothing acknowledged
	hdr         []byte // the header being written, reused

	acked atomic.Uint64 // the highest acknowledgement received (or frame given up on)
	// waiting is when the watchdog found frames unacknowledged, in Unix
	// nanoseconds; an acknowledgement clears it.
	waiting atomic.Int64
	probing atomic.Bool // a probe of the peer runs
	// refusing says that the link gave up on frames the peer would not
	// take (maxFruitless streams in a row); until the peer acknowledges
	// a frame again, a Send that cannot write fails at once.
	refusing atomic.Bool
	pushed   atomic.Uint64 // q.next, for checking acknowledgements
	ackc     chan struct{} // a token on every acknowledgement
}

// StreamHandler takes the frames of one inbound stream
// (MessengerOptions.NewStreamHandler), on the stream's reader goroutine.
type StreamHandler struct {
	// Frame handles one frame; frames come in order.
	Frame func(frame []byte)
	// Drained, if set, is called after Frame whenever no further complete
	// frame is buffered — before the reader waits on the network — and,
	// if the stream ends with frames handled since the last call, once
	// more then (also after a Frame that panicked). A handler that holds
	// work back while frames follow one another (the replies to a burst of
	// frames, written together) does it here: a burst read at once is
	// handled frame by frame and then drained once.
	Drained func()
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
	opts.ResendTimeout = cmp.Or(opts.ResendTimeout, DefaultResendTimeout)
	opts.SendWindow = max(cmp.Or(opts.SendWindow, DefaultSendWindow), 2*opts.MaxFrameSize)
	opts.StallTimeout = cmp.Or(opts.StallTimeout, DefaultStallTimeout)
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
		done:    make(chan struct{}),
		out:     make(map[peer.ID]*outStream),
		links:   make(map[peer.ID]*inLink),
		streams: make(map[network.Stream]struct{}),
	}
	h.h.SetStreamHandler(id, m.handleStream)
	go m.watchdog()
	return m
}

// Stats returns the messenger's counters.
func (m *Messenger) Stats() MessengerStats {
	return MessengerStats{
		FramesSent:     m.framesSent.Load(),
		Writes:         m.writes.Load(),
		FramesReceived: m.framesReceived.Load(),
		BytesSent:      m.bytesSent.Load(),
		BytesReceived:  m.bytesReceived.Load(),
		Errors:         m.errs.Load(),
		FramesResent:   m.resent.Load(),
		Duplicates:     m.dups.Load(),
		FramesDropped:  m.dropped.Load(),
		Unacknowledged: m.unacknowledged(),
	}
}

// unacknowledged counts the frames in every peer's send queue.
func (m *Messenger) unacknowledged() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n uint64
	for _, o := range m.out {
		if p, a := o.pushed.Load(), o.acked.Load(); p > a {
			n += p - a
		}
	}
	return n
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
	close(m.done)
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
