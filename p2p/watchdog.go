package p2p

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

// A connection can die without closing: a network partition drops every
// packet, and TCP keeps the connection, retransmitting with a backoff that
// doubles up to minutes — so once the network is back, the frames it holds
// may wait half a minute or more for TCP's next try. The watchdog notices a
// link whose frames go unacknowledged for StallTimeout and pings the peer
// on a new stream, answered by the peer's libp2p ping service whatever its
// handlers are doing. A peer that answers is only slow, and is given
// another StallTimeout; one that does not within probeTimeout has its
// connection closed, so that the link resends on a new one, which
// resendLoop dials every second or so until the network is back.

const (
	// watchdogTick is how often the watchdog looks at the links.
	watchdogTick = time.Second
	// probeTimeout bounds the ping that tells a dead connection from a
	// slow peer (or StallTimeout, if shorter).
	probeTimeout = 5 * time.Second
)

// watchdog looks at every link each watchdogTick until the messenger
// closes.
func (m *Messenger) watchdog() {
	t := time.NewTicker(watchdogTick)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case now := <-t.C:
			m.mu.Lock()
			for to, o := range m.out {
				m.watch(to, o, now)
			}
			m.mu.Unlock()
		}
	}
}

// watch starts the clock of a link with frames unacknowledged, and probes
// the peer once the clock passes StallTimeout. m.mu is held.
func (m *Messenger) watch(to peer.ID, o *outStream, now time.Time) {
	if o.pushed.Load() <= o.acked.Load() {
		return
	}
	since := o.waiting.Load()
	if since == 0 {
		o.waiting.Store(now.UnixNano())
		return
	}
	if now.Sub(time.Unix(0, since)) < m.opts.StallTimeout || !o.probing.CompareAndSwap(false, true) {
		return
	}
	go m.probe(to, o, now.Sub(time.Unix(0, since)))
}

// probe pings peer to, whose link has had frames unacknowledged for
// stalled, and closes the link's connection if the peer does not answer.
func (m *Messenger) probe(to peer.ID, o *outStream, stalled time.Duration) {
	defer o.probing.Store(false)
	o.mu.Lock()
	s := o.s
	o.mu.Unlock()
	if s == nil {
		return // resendLoop is on it
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(probeTimeout, m.opts.StallTimeout))
	defer cancel()
	var err error
	select {
	case res := <-ping.Ping(ctx, m.h.h, to):
		err = res.Error
	case <-ctx.Done():
		err = ctx.Err()
	case <-m.done:
		return
	}
	if err == nil {
		o.waiting.Store(time.Now().UnixNano()) // slow, not gone: another StallTimeout
		return
	}
	m.logger.Info("a peer neither acknowledged frames nor answered a ping; closing the connection to resend on a new one",
		"peer", m.h.describe(to), "unacknowledged_for", stalled.Round(time.Second), "ping", err)
	s.Conn().Close()
}
