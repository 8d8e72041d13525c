package p2p

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// The sender's side of a link (see link.go): acknowledgements, and resends
// when a stream ends before its frames are acknowledged.

const (
	// resendBackoffMin and resendBackoffMax bound the wait between two
	// attempts to reopen a link.
	resendBackoffMin = 50 * time.Millisecond
	resendBackoffMax = time.Second
	// resendDialTimeout bounds one dial of resendLoop: a dial into a
	// network that does not answer waits on TCP's SYN retries, which back
	// off, so a fresh dial after a short wait gets through sooner once
	// the network is back.
	resendDialTimeout = 3 * time.Second
	// maxFruitless is how many streams in a row may end without a frame
	// acknowledged before the sender gives up on the frames it holds: a
	// peer that resets a stream on a frame it refuses (one over its
	// frame size limit, say) would otherwise be sent it for ever. Only
	// streams that end while their connection stays open count: a
	// network that drops connections says nothing of the peer; those
	// are bounded by maxConnLosses.
	maxFruitless = 5
	// maxConnLosses is how many streams in a row may end with their
	// connection, no frame acknowledged, before the sender gives up: a
	// network that closes every connection before a frame gets through
	// (a middlebox that kills what we send, say) would otherwise have the
	// frames resent for ever, each on a new connection. A network that
	// merely drops connections now and then lets an acknowledgement
	// through long before.
	maxConnLosses = 100
)

// trim drops the frames the peer has acknowledged. o.mu is held.
func (m *Messenger) trim(o *outStream) {
	if a := o.acked.Load(); a > o.q.first {
		// ackLoop checked a against what was pushed; frames are never
		// taken back once written, so it holds still.
		o.q.ack(min(a, o.q.next))
	}
}

// ackLoop reads the acknowledgements the peer writes back on stream s of
// o until the stream ends, and then has the link reopened if frames are
// left unacknowledged.
func (m *Messenger) ackLoop(to peer.ID, o *outStream, s network.Stream) {
	br := bufio.NewReaderSize(s, 64)
	for {
		v, err := binary.ReadUvarint(br)
		if err != nil {
			// A closing connection is marked closed before its streams
			// end, so this tells the peer's reset from the network's.
			m.streamEnded(to, o, s, s.Conn().IsClosed())
			return
		}
		if v == 0 || v > o.pushed.Load() {
			m.errs.Add(1)
			m.logger.Warn("resetting a stream: the peer acknowledged frames it was never sent", "peer", m.h.describe(to),
				"acknowledged", v, "sent", o.pushed.Load()-1)
			s.Reset()
			m.streamEnded(to, o, s, false)
			return
		}
		raise(&o.acked, v)
		o.waiting.Store(0)
		o.refusing.Store(false)
		select {
		case o.ackc <- struct{}{}:
		default:
		}
		// Give back the acknowledged frames' memory now, unless a Send
		// holds the link: it trims when it is done.
		if o.mu.TryLock() {
			m.trim(o)
			o.mu.Unlock()
		}
	}
}

// streamEnded handles the end of o's stream s: if it is still the link's
// stream and frames are left unacknowledged, resendLoop reopens the link.
// connLost says that s ended with its connection, which does not count
// against the peer (see maxFruitless).
func (m *Messenger) streamEnded(to peer.ID, o *outStream, s network.Stream, connLost bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.s != s {
		return // retired or replaced already: whoever did reopens
	}
	m.forget(s)
	s.Reset()
	o.s = nil
	m.trim(o)
	switch {
	case o.acked.Load() > o.ackedAtOpen:
		o.fruitless, o.connLosses = 0, 0
	case connLost:
		o.connLosses++
	default:
		o.fruitless++
	}
	if o.q.frames() == 0 || m.closed.Load() {
		return
	}
	if o.fruitless >= maxFruitless {
		o.refusing.Store(true)
		m.giveUp(to, o, fmt.Sprintf("%d streams in a row ended without the peer acknowledging frame %d", o.fruitless, o.q.first))
		return
	}
	if o.connLosses >= maxConnLosses {
		m.giveUp(to, o, fmt.Sprintf("%d connections in a row closed before the peer acknowledged frame %d", o.connLosses, o.q.first))
		return
	}
	m.logger.Info("lost the stream to a peer with frames unacknowledged; resending them", "peer", m.h.describe(to), "frames", o.q.frames())
	m.startResend(to, o)
}

// startResend has resendLoop reopen o's link, unless it does already.
// o.mu is held.
func (m *Messenger) startResend(to peer.ID, o *outStream) {
	if o.resending {
		return
	}
	o.resending = true
	if o.brokenAt.IsZero() {
		o.brokenAt = time.Now()
	}
	go m.resendLoop(to, o)
}

// resendLoop reopens o's link and resends what the peer has not
// acknowledged, retrying with backoff until it succeeds, the peer
// acknowledges everything, the messenger closes, or ResendTimeout has
// passed since the link broke (the frames are then dropped).
func (m *Messenger) resendLoop(to peer.ID, o *outStream) {
	wait := resendBackoffMin
	for {
		// Dial, if need be, without o's lock: Sends meanwhile only queue.
		var dialErr error
		if !m.h.Connected(to) {
			ctx, cancel := context.WithTimeout(context.Background(), min(m.opts.WriteTimeout, resendDialTimeout))
			dialErr = m.h.redialNow(ctx, to)
			cancel()
		}
		o.mu.Lock()
		m.trim(o)
		switch {
		case m.closed.Load() || o.q.frames() == 0 || o.s != nil:
			o.resending, o.brokenAt = false, time.Time{}
			o.mu.Unlock()
			return
		case time.Since(o.brokenAt) > m.opts.ResendTimeout:
			o.resending = false
			m.giveUp(to, o, fmt.Sprintf("the peer could not be reached again within %v", m.opts.ResendTimeout))
			o.mu.Unlock()
			return
		}
		err := dialErr
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), m.opts.WriteTimeout)
			err = m.open(ctx, to, o)
			cancel()
			if err == nil {
				o.resending, o.brokenAt = false, time.Time{}
				o.mu.Unlock()
				m.logger.Debug("reopened the link; resent the frames not acknowledged", "peer", m.h.describe(to))
				return
			}
			// The peer was reached but took no stream: it refuses us
			// (its address book no longer lists us, say), or does not
			// speak the protocol. That, unlike a network that does not
			// answer, is not waited out for ResendTimeout.
			if o.fruitless++; o.fruitless >= maxFruitless {
				o.resending = false
				o.refusing.Store(true)
				m.giveUp(to, o, fmt.Sprintf("the peer was reached %d times in a row but took no stream: %v", o.fruitless, err))
				o.mu.Unlock()
				return
			}
		}
		o.mu.Unlock()
		m.logger.Debug("could not reopen the link yet", "peer", m.h.describe(to), "err", err, "retry_in", wait)
		select {
		case <-m.done:
			o.mu.Lock()
			o.resending = false
			o.mu.Unlock()
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, resendBackoffMax)
	}
}

// giveUp drops every frame o holds, counting them, and starts a new link,
// so that the receiver does not wait for the dropped frames. o.mu is held.
func (m *Messenger) giveUp(to peer.ID, o *outStream, why string) {
	n := o.q.frames()
	m.dropped.Add(n)
	o.q.dropAll()
	o.written = o.q.next
	raise(&o.acked, o.q.next) // nothing is awaited of the old link
	o.link = newLinkID()
	o.fruitless, o.connLosses, o.brokenAt = 0, 0, time.Time{}
	m.logger.Warn("dropped frames a peer never acknowledged", "peer", m.h.describe(to), "frames", n, "reason", why)
	if f := m.opts.OnGiveUp; f != nil && n > 0 {
		go f(to, n, why)
	}
}

// raise sets a to v unless it holds more already.
func raise(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
