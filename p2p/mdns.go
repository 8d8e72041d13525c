package p2p

import (
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
)

// mdnsServiceName is the DNS-SD service bandit-node daemons announce, so that
// they do not see (or answer) other libp2p applications on the LAN.
const mdnsServiceName = "_bandit-node._udp"

// startMDNS announces h on the local network and feeds discovered addresses of
// address-book peers to the dialer.
func startMDNS(h *Host) (mdns.Service, error) {
	svc := mdns.NewMdnsService(h.h, mdnsServiceName, mdnsNotifee{h: h})
	if err := svc.Start(); err != nil {
		return nil, fmt.Errorf("starting mDNS: %w", err)
	}
	return svc, nil
}

// mdnsNotifee receives mDNS discoveries.
type mdnsNotifee struct{ h *Host }

// HandlePeerFound records the addresses of an address-book peer (with a
// bounded TTL, since mDNS answers are not authenticated) and nudges its dialer.
// Peers not in the address book are ignored.
func (n mdnsNotifee) HandlePeerFound(ai peer.AddrInfo) {
	h := n.h
	if ai.ID == h.ID() {
		return
	}
	st, ok := h.book.Load().states[ai.ID]
	if !ok {
		h.logger.Debug("mDNS: ignoring a peer that is not in the address book", "peer", ai.ID.String())
		return
	}
	if len(ai.Addrs) == 0 {
		return
	}
	h.h.Peerstore().AddAddrs(ai.ID, ai.Addrs, peerstore.AddressTTL)
	h.logger.Debug("mDNS: found address-book peer", "peer", h.describe(ai.ID), "addrs", fmt.Sprint(ai.Addrs))
	if !h.Connected(ai.ID) {
		st.nudge()
	}
}
