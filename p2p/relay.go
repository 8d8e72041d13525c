package p2p

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/multiformats/go-multiaddr"
)

// Connection kinds reported by Host.ConnKind and PeerStatus.Conn.
const (
	// ConnDirect is a connection made straight to the peer's own address
	// (including one a relayed connection was upgraded to by hole punching).
	ConnDirect = "direct"
	// ConnRelayed is a connection carried through a circuit-relay v2 relay.
	ConnRelayed = "relayed"
)

// Reservation renewal: a reservation is renewed reserveMargin before it
// expires, and at least every reserveEvery (so one lost when the relay
// restarted is made again soon); a failed attempt is retried after the
// dial backoff.
const (
	reserveMargin = 2 * time.Minute
	reserveEvery  = 5 * time.Minute
)

// relayACL admits to the relay service only the peers of the address book:
// a reservation from, and a relayed connection between, book peers.
type relayACL struct{ g *Gater }

var _ relayv2.ACLFilter = relayACL{}

// AllowReserve admits a reservation from an address-book peer.
func (a relayACL) AllowReserve(p peer.ID, _ multiaddr.Multiaddr) bool {
	return a.g.check(p, "relay reservation from")
}

// AllowConnect admits a relayed connection only when both ends are in the
// address book.
func (a relayACL) AllowConnect(src peer.ID, _ multiaddr.Multiaddr, dest peer.ID) bool {
	return a.g.check(src, "relayed connection from") && a.g.check(dest, "relayed connection to")
}

// relayResources are the limits of the relay service, with l's per-peer
// limits (defaults filled in). Relayed connections carry whole sessions
// between address-book peers, so they have no duration limit, and relay
// v2's own data limit (128 KiB by default) is not used either: with it,
// libp2p marks every relayed connection "limited" and refuses session
// streams on it. The bytes a relayed connection carries are bounded by
// meteredStream instead; the ACL keeps everybody else out.
func relayResources(l RelayLimits) relayv2.Resources {
	rc := relayv2.DefaultResources()
	rc.Limit = nil
	rc.MaxReservations = l.Reservations
	// Circuits open at once from, and to, each peer; the resource
	// manager's relay scopes allow limitBookPeers (addRelayLimits).
	rc.MaxCircuits = l.CircuitsPerPeer
	// Organizations behind one NAT share an address; the book bounds them.
	rc.MaxReservationsPerIP = limitBookPeers
	rc.MaxReservationsPerASN = limitBookPeers
	return rc
}

// startRelayService runs a circuit-relay v2 service on the host, serving
// address-book peers only, within limits.
func (h *Host) startRelayService(limits RelayLimits) error {
	rh := relayHost{Host: h.h, limit: limits.CircuitBytes, over: func(src peer.ID, used int64) {
		h.logger.Warn("the relay reset a relayed connection that reached its byte limit; the peers may connect again",
			"from", h.describe(src), "bytes", used, "limit", limits.CircuitBytes)
	}}
	r, err := relayv2.New(rh, relayv2.WithResources(relayResources(limits)), relayv2.WithACL(relayACL{g: h.gater}))
	if err != nil {
		return fmt.Errorf("starting the circuit-relay service: %w", err)
	}
	h.relaySvc = r
	return nil
}

// circuitAddr is the address of a peer reachable through relay's circuit.
func circuitAddr(relay peer.ID) multiaddr.Multiaddr {
	return multiaddr.StringCast("/p2p/" + relay.String() + "/p2p-circuit")
}

// isCircuit reports whether a goes through a relay.
func isCircuit(a multiaddr.Multiaddr) bool {
	_, err := a.ValueForProtocol(multiaddr.P_CIRCUIT)
	return err == nil
}

// ConnKind returns ConnDirect if the host has a direct connection to id,
// ConnRelayed if it has only relayed ones, and "" if none.
func (h *Host) ConnKind(id peer.ID) string {
	kind := ""
	for _, c := range h.h.Network().ConnsToPeer(id) {
		if !isCircuit(c.RemoteMultiaddr()) && !isCircuit(c.LocalMultiaddr()) {
			return ConnDirect
		}
		kind = ConnRelayed
	}
	return kind
}

// keepReservation keeps a reservation at the relay of address-book peer
// relay, so that peers can reach this host through it, until ctx ends.
func (h *Host) keepReservation(ctx context.Context, relay peer.ID) {
	bo := newBackoff(h.boMin, h.boMax)
	reserved, failures := false, 0
	for {
		wait := reserveEvery
		res, err := h.reserve(ctx, relay)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if reserved || failures == 0 {
				h.logger.Warn("no reservation at the relay: peers cannot reach this node through it (is [relay] service = true there?)", "relay", h.describe(relay), "err", err)
			}
			reserved = false
			failures++
			wait = bo.Next()
		default:
			bo.Reset()
			failures = 0
			if !reserved {
				h.logger.Info("reservation made at the relay: peers can reach this node through it", "relay", h.describe(relay), "expires", res.Expiration.Format(time.RFC3339))
			}
			reserved = true
			if until := time.Until(res.Expiration) - reserveMargin; until > 0 && until < wait {
				wait = until
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-h.relayUp:
			t.Stop()
		}
	}
}

// reserve connects to relay and makes a reservation there.
func (h *Host) reserve(ctx context.Context, relay peer.ID) (*client.Reservation, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := h.connect(ctx, relay); err != nil {
		return nil, fmt.Errorf("connecting to the relay: %w", explainDial(err))
	}
	h.dialMu.RLock()
	defer h.dialMu.RUnlock()
	if h.dialClosed {
		return nil, errHostClosed
	}
	res, err := client.Reserve(ctx, h.h, peer.AddrInfo{ID: relay})
	if err != nil {
		var re client.ReservationError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("the relay refused the reservation (%s): %w", re.Status, err)
		}
		return nil, err
	}
	return res, nil
}

// relayConnected nudges the reservation loop when the host connects to its
// relay, so that a reservation lost with the previous connection is made
// again at once.
func (h *Host) relayConnected(id peer.ID) {
	if h.relayVia == "" || id != h.relayVia {
		return
	}
	select {
	case h.relayUp <- struct{}{}:
	default:
	}
}

// relayOptions are the libp2p options for the relay features cfg (with
// its validated book) uses. A host that reaches a peer through a relay, or
// is reached through one, gets the circuit-relay client transport and DCUtR
// hole punching, which upgrades a relayed connection to a direct one when
// both NATs let it. A host behind a NAT (RelayVia) also asks its router
// for a port mapping over UPnP or NAT-PMP (NATPortMap), so that it may be
// dialed directly where the router allows. AutoNAT is not enabled: the
// configuration says which peers need a relay, and AutoNAT probes would
// come from, and go to, peers outside the address book, which the gater
// refuses. A host that uses none of this has no relay transport at all.
func relayOptions(cfg Config, book []Peer) []libp2p.Option {
	client := cfg.RelayVia != ""
	for _, p := range book {
		if slices.ContainsFunc(p.Addrs, isCircuit) {
			client = true
		}
	}
	if !client {
		return []libp2p.Option{libp2p.DisableRelay()}
	}
	opts := []libp2p.Option{libp2p.EnableRelay(), libp2p.EnableHolePunching()}
	if cfg.RelayVia != "" {
		opts = append(opts, libp2p.NATPortMap())
	}
	return opts
}
