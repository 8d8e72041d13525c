package p2p

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

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
// ends or misbehaves: first the link header (link.go), then frames, each
// numbered one more than the last, of which those the handler already got
// through another stream of the link are dropped.
func (m *Messenger) readLoop(from peer.ID, s network.Stream) {
	handle := func(frame []byte) { m.handler(from, frame) }
	var drained func()
	if m.opts.NewStreamHandler != nil {
		h := m.opts.NewStreamHandler(from)
		handle, drained = h.Frame, h.Drained
	}
	// undrained: frames were handled since drained was last called.
	undrained := false
	if drained != nil {
		defer func() {
			if undrained {
				m.handleDrained(drained, from)
			}
		}()
	}
	br := bufio.NewReaderSize(s, streamBufferSize)
	idle, readTimeout := m.opts.IdleTimeout, m.opts.ReadTimeout
	if err := s.SetReadDeadline(time.Now().Add(readTimeout)); err != nil {
		s.Reset()
		return
	}
	hdr, err := ReadFrame(br, maxHeaderSize)
	var linkID, seq uint64
	if err == nil {
		linkID, seq, err = parseHeader(hdr)
	} else if errors.Is(err, ErrFrameTooLarge) {
		err = errBadHeader
	}
	l := m.linkFrom(from)
	if err == nil {
		err = l.join(linkID, seq)
	}
	if err != nil {
		m.endStream(from, s, err, errors.Is(err, io.EOF))
		return
	}
	ack := newAcker(m, s, l)
	defer ack.stop()
	ack.flush() // tell a resending sender at once where the link stands
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
		heard = true
		ok, err := m.deliverFrame(handle, from, l, linkID, seq, frame)
		if borrowed {
			br.Discard(len(frame))
		}
		undrained = drained != nil
		if err != nil {
			m.endStream(from, s, err, false)
			return
		}
		if !ok {
			// The handler's state for this stream (what it remembers
			// of the last frame) cannot be trusted after a panic, nor
			// the reader's: the stream is reset, and the peer's next
			// frame opens a new one with a new handler.
			s.Reset()
			return
		}
		seq++
		ack.received(len(frame))
		if undrained && !frameBuffered(br) {
			undrained = false
			if !m.handleDrained(drained, from) {
				s.Reset()
				return
			}
		}
	}
}

// handleDrained calls a stream handler's Drained and reports whether it
// returned; a panic is recovered and logged as handleFrame does.
func (m *Messenger) handleDrained(drained func(), from peer.ID) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			m.errs.Add(1)
			m.logger.Error("internal error after handling frames; resetting the stream", "peer", m.h.describe(from),
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	drained()
	return true
}

// errLinkSuperseded ends a stream of a link the sender has replaced.
var errLinkSuperseded = errors.New("the sender started a new link; this stream belongs to the old one")

// deliverFrame hands frame, number seq of link linkID, to the handler
// unless the handler had it already, and reports whether the handler
// returned (see handleFrame). The frame counts as handed over before the
// handler runs, so that one that makes it panic is not sent again.
func (m *Messenger) deliverFrame(handle func([]byte), from peer.ID, l *inLink, linkID, seq uint64, frame []byte) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.id != linkID:
		return true, errLinkSuperseded
	case seq < l.next:
		m.dups.Add(1)
		return true, nil
	case seq > l.next:
		return true, fmt.Errorf("%w: frame %d came before frame %d", ErrFrameMalformed, seq, l.next)
	}
	l.next++
	l.acked.Store(l.next)
	m.framesReceived.Add(1)
	m.bytesReceived.Add(uint64(len(frame)))
	return m.handleFrame(handle, from, frame), nil
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
	case errors.Is(err, errLinkSuperseded):
		m.logger.Debug("closing a stream of a superseded link", "peer", who)
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
