package p2p

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

const (
	// unreachablePeerWarning is how long an address-book peer must stay
	// unreachable before the dialer logs a warning; before, its failures
	// are logged at info (the first) and debug level. Daemons started
	// together miss each other for a moment; a minute is a real outage.
	unreachablePeerWarning = time.Minute
	// dialAttemptTimeout bounds one dial of an address-book peer.
	dialAttemptTimeout = 15 * time.Second
	// pingTimeout bounds one latency measurement.
	pingTimeout = 10 * time.Second
	// connStableAfter is how long a connection must live to count as one:
	// a peer that closes it sooner (its gater refuses us) has failed the
	// attempt, and the backoff goes on.
	connStableAfter = 5 * time.Second
	// closingBackoffMax caps the backoff between attempts to connect to a
	// peer that closes our connections at once, for the connection to come
	// up within seconds once the peer adds our card (the peer's own dialer
	// then dials us too, at once). An attempt costs a handshake on each
	// side and no log line.
	closingBackoffMax = 4 * time.Second
)

// Start starts the address-book dialer, which keeps a connection to every
// address-book peer (dialing with exponential backoff and jitter, and
// redialing after a disconnect) and pings connected peers to measure latency,
// and starts mDNS if enabled. Everything stops when ctx ends or on Close.
// Start does nothing if called again or after Close.
func (h *Host) Start(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started || h.closed {
		return
	}
	h.started = true
	ctx, h.cancel = context.WithCancel(ctx)
	h.runCtx = ctx
	b := h.book.Load()
	for _, p := range b.peers {
		h.startDialer(p, b.states[p.ID])
	}
	if h.relayVia != "" {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.keepReservation(ctx, h.relayVia)
		}()
	}
	if h.mdns {
		svc, err := startMDNS(h)
		if err != nil {
			h.logger.Warn("mDNS discovery is disabled: starting it failed", "err", err)
		} else {
			h.mdnsSvc = svc
		}
	}
}

// startDialer starts the dialer of address-book peer p, whose state is st,
// in the context Start was given; SetBook stops it when p leaves the book.
// h.mu is held, and the host is started and not closed.
func (h *Host) startDialer(p Peer, st *peerState) {
	ctx, cancel := context.WithCancel(h.runCtx)
	if h.dialers == nil {
		h.dialers = map[peer.ID]context.CancelFunc{}
	}
	h.dialers[p.ID] = cancel
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.keepConnected(ctx, p, st)
	}()
}

// keepConnected is the dialer of one address-book peer, whose state is st.
//
// A dial that succeeds is not yet a connection that holds: a peer whose
// address book does not list us completes the handshake and its gater then
// closes the connection at once, before identify can run. So a connection
// counts only once it has lived h.stableAfter; one that closes sooner is a
// failed attempt, retried with backoff like a dial that failed. If it
// closed before identify completed (failClosesAtOnce), the backoff is
// capped at closingBackoffMax, so that the connection comes up within
// seconds once the peer adds our card. The backoff is reset only by a
// connection that lived h.stableAfter.
//
// The log gets one line when the peer's state changes (the first failure,
// another class of failure, connected again), a warning once it has been
// out of reach for h.warnAfter, and debug lines otherwise.
func (h *Host) keepConnected(ctx context.Context, p Peer, st *peerState) {
	bo := newBackoff(h.boMin, h.boMax)
	closing := newBackoff(min(h.boMin, closingBackoffMax), min(h.boMax, closingBackoffMax))
	failures := 0
	var firstFailure time.Time
	warned := false
	last := failNone
	seenEnds, _, _ := st.lastEnd()
	for ctx.Err() == nil {
		if h.Connected(p.ID) {
			if age := st.connAge(time.Now()); age < h.stableAfter {
				h.waitConnected(ctx, st, h.stableAfter-age)
				continue
			}
			if failures > 0 {
				h.logger.Info("address-book peer connected again; its connection holds", "peer", h.describe(p.ID),
					"failed_attempts", failures, "was", st.reasonNow())
			}
			bo.Reset()
			closing.Reset()
			failures, warned, last = 0, false, failNone
			st.connStable()
			h.measureLatency(ctx, p.ID)
			h.waitConnected(ctx, st, h.pingEach-h.pingEach/8+time.Duration(rand.Int64N(int64(h.pingEach/4)+1)))
			continue
		}
		var err error
		if ends, lived, atOnce := st.lastEnd(); ends != seenEnds {
			seenEnds = ends
			switch {
			case atOnce:
				err = errClosesAtOnce
			case lived < h.stableAfter:
				err = errDroppedSoon
			}
		}
		if err == nil {
			select {
			case <-st.dropped: // accounted for by ends
			default:
			}
			err = h.dial(ctx, p)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				st.dialSucceeded()
				if !h.Connected(p.ID) {
					// Closed already: let the notification of its
					// end count it, rather than dial again.
					h.waitConnected(ctx, st, time.Second)
				}
				continue // judged once it has lived stableAfter, or closed
			}
		}
		now := time.Now()
		kind := kindOf(err)
		st.dialFailed(now, kind, err)
		failures++
		var d time.Duration
		if kind == failClosesAtOnce {
			d = closing.Next()
		} else {
			d = bo.Next()
		}
		reason := reasonOf(err)
		switch {
		case failures == 1 || kind != last:
			if failures == 1 {
				firstFailure = now
			}
			// Daemons started together cannot reach each other for a
			// moment: a warning is for a peer that stays out of reach.
			h.logger.Info("address-book peer not connected; retrying with backoff", "peer", h.describe(p.ID),
				"reason", reason, "err", err, "retry_in", d.Round(time.Millisecond))
		case !warned && now.Sub(firstFailure) >= h.warnAfter:
			warned = true
			h.logger.Warn("address-book peer still not connected; retrying with backoff", "peer", h.describe(p.ID),
				"reason", reason, "for", now.Sub(firstFailure).Round(time.Second), "failures", failures, "err", err, "retry_in", d.Round(time.Millisecond))
		default:
			h.logger.Debug("address-book peer still not connected", "peer", h.describe(p.ID), "reason", reason, "failures", failures, "retry_in", d.Round(time.Millisecond))
		}
		last = kind
		h.wait(ctx, st, d)
	}
}

// wait sleeps for d, or until the peer's dialer is nudged (new addresses)
// or ctx ends.
func (h *Host) wait(ctx context.Context, st *peerState, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-st.wake:
	case <-t.C:
	}
}

// waitConnected sleeps for d, or until the peer's last connection closes,
// its dialer is nudged, or ctx ends.
func (h *Host) waitConnected(ctx context.Context, st *peerState, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-st.wake:
	case <-st.dropped:
	case <-t.C:
	}
}

// dial makes one attempt to connect to p at its known addresses. libp2p's own
// per-address dial backoff is cleared first: the dialer's backoff replaces it.
//
// The dialer used to bypass that backoff with network.WithForceDirectDial. In
// go-libp2p v0.51 a forced direct dial calls Swarm.nonProxyAddr, which
// dereferences a nil transport when the swarm closes during the dial (CI
// crashed on it in the node tests). Relays are disabled, so "direct only"
// meant nothing else for us.
func (h *Host) dial(ctx context.Context, p Peer) error {
	ctx, cancel := context.WithTimeout(ctx, dialAttemptTimeout)
	defer cancel()
	h.clearBackoff(p.ID)
	if len(h.h.Peerstore().Addrs(p.ID)) == 0 {
		return &dialError{kind: failNoAddrs, detail: "no known addresses (none configured, none discovered yet)"}
	}
	return explainDial(h.connect(ctx, p.ID))
}

// clearBackoff forgets the swarm's dial backoff for id: our dialers keep
// their own.
func (h *Host) clearBackoff(id peer.ID) {
	if sw, ok := h.h.Network().(*swarm.Swarm); ok {
		sw.Backoff().Clear(id)
	}
}

// redialNow dials address-book peer id within ctx, whatever the swarm's
// backoff: for a messenger's link that lost its connection (resendLoop) and
// for Redial. A peer that closes our connections at once is not dialed
// (its connection would close again, and every caller dialing it at once
// would make a storm of connections): the address-book dialer retries it
// with backoff, and the error says why.
func (h *Host) redialNow(ctx context.Context, id peer.ID) error {
	if st := h.book.Load().states[id]; st != nil && st.isClosing() {
		return errClosesAtOnce
	}
	h.clearBackoff(id)
	return explainDial(h.connect(ctx, id))
}

// dialForStream dials address-book peer id within ctx for a stream to
// open (Messenger.newStream), with the error explained as the dialer
// explains it. A peer that closes our connections at once is not dialed:
// the connection would close again before the stream opens.
func (h *Host) dialForStream(ctx context.Context, id peer.ID) error {
	if st := h.book.Load().states[id]; st != nil && st.isClosing() {
		return errClosesAtOnce
	}
	return explainDial(h.connect(ctx, id))
}

// measureLatency pings id once; the ping service records the round trip in
// the peerstore's latency average.
func (h *Host) measureLatency(ctx context.Context, id peer.ID) {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	select {
	case res := <-ping.Ping(ctx, h.h, id):
		if res.Error != nil && ctx.Err() == nil {
			h.logger.Debug("ping failed", "peer", h.describe(id), "err", res.Error)
		}
	case <-ctx.Done():
	}
}
