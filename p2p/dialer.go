package p2p

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
func (h *Host) keepConnected(ctx context.Context, p Peer, st *peerState) {
	bo := newBackoff(h.boMin, h.boMax)
	failures := 0
	var firstFailure time.Time
	warned := false
	for ctx.Err() == nil {
		if h.Connected(p.ID) {
			if warned {
				h.logger.Info("address-book peer reachable again", "peer", h.describe(p.ID))
			}
			bo.Reset()
			failures, warned = 0, false
			st.dialSucceeded()
			h.measureLatency(ctx, p.ID)
			h.wait(ctx, st, h.pingEach-h.pingEach/8+time.Duration(rand.Int64N(int64(h.pingEach/4)+1)))
			continue
		}
		err := h.dial(ctx, p)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			st.setErr("")
			continue
		}
		st.setErr(err.Error())
		failures++
		st.dialFailed(time.Now())
		d := bo.Next()
		switch {
		case failures == 1:
			firstFailure = time.Now()
			// Daemons started together cannot reach each other for a
			// moment: a warning is for a peer that stays out of reach.
			h.logger.Info("address-book peer not reachable yet; retrying with backoff", "peer", h.describe(p.ID), "err", err, "retry_in", d)
		case !warned && time.Since(firstFailure) >= h.warnAfter:
			warned = true
			h.logger.Warn("cannot reach address-book peer; still retrying with backoff", "peer", h.describe(p.ID),
				"unreachable_for", time.Since(firstFailure).Round(time.Second), "failures", failures, "err", err, "retry_in", d)
		default:
			h.logger.Debug("address-book peer still unreachable", "peer", h.describe(p.ID), "err", err, "failures", failures, "retry_in", d)
		}
		h.wait(ctx, st, d)
	}
}

// wait sleeps for d, or until the peer's dialer is nudged or ctx ends.
func (h *Host) wait(ctx context.Context, st *peerState, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-st.wake:
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
	addrs := h.h.Peerstore().Addrs(p.ID)
	if len(addrs) == 0 {
		return fmt.Errorf("dialing address-book peer %s: no known addresses (none configured, none discovered yet)", h.describe(p.ID))
	}
	if err := h.connect(ctx, p.ID); err != nil {
		return fmt.Errorf("dialing address-book peer %s at %v: %w", h.describe(p.ID), addrs, explainDial(err))
	}
	return nil
}

// explainDial rewrites libp2p's error for a failed dial for the operator:
// an address the host's dial policy held back (QUIC, while TCP is still
// given its chance: dialAddrAllowed) shows as held back rather than as
// "gater disallows connection to peer", which reads like an access refusal.
// Other errors are returned as they are.
func explainDial(err error) error {
	var de *swarm.DialError
	if !errors.As(err, &de) || len(de.DialErrors) == 0 {
		return err
	}
	var b strings.Builder
	b.WriteString("failed")
	if de.Cause != nil {
		fmt.Fprintf(&b, " (%v)", de.Cause)
	}
	b.WriteString(":")
	for _, te := range de.DialErrors {
		cause := fmt.Sprint(te.Cause)
		if errors.Is(te.Cause, swarm.ErrGaterDisallowedConnection) {
			cause = fmt.Sprintf("held back: TCP first, other transports once TCP has failed %d times over %v", quicAfterFailures, quicAfterFailing)
		}
		fmt.Fprintf(&b, "\n  * [%s] %s", te.Address, cause)
	}
	if de.Skipped > 0 {
		fmt.Fprintf(&b, "\n  * ... and %d more", de.Skipped)
	}
	return &explainedError{msg: b.String(), err: err}
}

// explainedError is an error with a message of its own, which still
// unwraps to the error it explains.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }

// clearBackoff forgets the swarm's dial backoff for id: our dialers keep
// their own.
func (h *Host) clearBackoff(id peer.ID) {
	if sw, ok := h.h.Network().(*swarm.Swarm); ok {
		sw.Backoff().Clear(id)
	}
}

// redialNow dials address-book peer id within ctx, whatever the swarm's
// backoff: for a messenger's link that lost its connection (resendLoop).
func (h *Host) redialNow(ctx context.Context, id peer.ID) error {
	h.clearBackoff(id)
	return h.connect(ctx, id)
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
