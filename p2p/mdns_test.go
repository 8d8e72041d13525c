package p2p

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

func TestMDNSNotifeeUsesOnlyAddressBookPeers(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	h := tn.hosts[0]
	_, stranger := newKey(t)
	addr := multiaddr.StringCast("/ip4/192.0.2.7/tcp/4001")
	n := mdnsNotifee{h: h}

	n.HandlePeerFound(peer.AddrInfo{ID: stranger, Addrs: []multiaddr.Multiaddr{addr}})
	if got := h.LibP2P().Peerstore().Addrs(stranger); len(got) != 0 {
		t.Errorf("addresses recorded for a stranger: %v", got)
	}

	st := h.book.Load().states[tn.ids[1]]
	select { // drain any earlier nudge
	case <-st.wake:
	default:
	}
	n.HandlePeerFound(peer.AddrInfo{ID: tn.ids[1], Addrs: []multiaddr.Multiaddr{addr}})
	found := false
	for _, a := range h.LibP2P().Peerstore().Addrs(tn.ids[1]) {
		if a.Equal(addr) {
			found = true
		}
	}
	if !found {
		t.Error("discovered address of an address-book peer was not recorded")
	}
	select {
	case <-st.wake:
	default:
		t.Error("the dialer of the discovered peer was not nudged")
	}

	n.HandlePeerFound(peer.AddrInfo{ID: h.ID(), Addrs: []multiaddr.Multiaddr{addr}}) // self: ignored
}

func TestMDNSStartAndClose(t *testing.T) {
	tn := newTestNet(t, 1, func(_ int, cfg *Config) { cfg.MDNS = true })
	h := tn.hosts[0]
	h.Start(t.Context()) // mDNS may be unavailable in a sandbox; Start only logs that
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}
