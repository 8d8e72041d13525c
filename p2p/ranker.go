package p2p

import (
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/multiformats/go-multiaddr"
)

// quicFallbackDelay is how long a dial waits for TCP before also trying a
// peer's QUIC addresses.
const quicFallbackDelay = 500 * time.Millisecond

// quicAfterFailures and quicAfterFailing are how many failed attempts of the
// address-book dialer to reach a peer over TCP, and for how long, make its
// QUIC addresses worth a try. The duration is for daemons started together:
// on a 2-core machine starting 103 daemons, TCP handshakes timed out for
// tens of seconds ("failed to negotiate security protocol: context deadline
// exceeded"), three failures came within seconds, and 4 of the 100 data
// owners of a SAMBA testnet ended up talking to the controller over QUIC for
// good — each costing that pair twice the CPU of TCP for every message.
const (
	quicAfterFailures = 3
	quicAfterFailing  = time.Minute
)

// tcpFirstRanker orders the dials of a peer's addresses TCP first: its TCP
// addresses as go-libp2p's default ranker would, and the others (QUIC)
// quicFallbackDelay later, so a peer that can be reached over TCP is. The
// default ranker prefers QUIC; we do not, because a session's messages are
// many and small and every one costs CPU: over loopback, the bare SAMBA
// message pattern (`bandit-node bench pattern --processes`, K = 10) takes
// 0.57 ms a step over TCP + Noise + yamux and 0.97 ms over QUIC. QUIC stays
// the fallback when TCP is blocked.
func tcpFirstRanker(addrs []multiaddr.Multiaddr) []network.AddrDelay {
	var tcp, other []multiaddr.Multiaddr
	for _, a := range addrs {
		if isTCP(a) {
			tcp = append(tcp, a)
		} else {
			other = append(other, a)
		}
	}
	ranked := swarm.DefaultDialRanker(tcp)
	var offset time.Duration
	if len(ranked) > 0 {
		offset = ranked[len(ranked)-1].Delay + quicFallbackDelay
	}
	for _, d := range swarm.DefaultDialRanker(other) {
		d.Delay += offset
		ranked = append(ranked, d)
	}
	return ranked
}

// isTCP reports whether a is a TCP address.
func isTCP(a multiaddr.Multiaddr) bool {
	_, err := a.ValueForProtocol(multiaddr.P_TCP)
	return err == nil
}

// dialAddrAllowed is the host's dial policy for an address-book peer's
// addresses: TCP always; another transport (QUIC) only if the peer has no TCP
// address or the address-book dialer failed quicAfterFailures times in a row
// to reach it, over at least quicAfterFailing. The ranker's delay alone does
// not keep a dial on TCP: when a peer is not listening yet (daemons starting
// together), its TCP dial fails at once, libp2p then dials QUIC immediately,
// and that handshake completes as soon as the peer comes up — leaving the
// pair on QUIC for good.
func (h *Host) dialAddrAllowed(id peer.ID, a multiaddr.Multiaddr) bool {
	if isTCP(a) || isCircuit(a) {
		return true
	}
	if st := h.book.Load().states[id]; st != nil && st.tcpBlocked(time.Now()) {
		return true
	}
	for _, b := range h.h.Peerstore().Addrs(id) {
		if isTCP(b) {
			return false
		}
	}
	return true
}
