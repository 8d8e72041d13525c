package p2p

import (
	"fmt"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/multiformats/go-multiaddr"
)

// addressBook is one version of a host's address book. It is never modified:
// SetBook replaces it whole, so a reader that loaded it sees one consistent
// book.
type addressBook struct {
	peers  []Peer
	byID   map[peer.ID]int        // index into peers
	states map[peer.ID]*peerState // one per peer
}

// newAddressBook indexes peers (validated already). A peer that is also in
// prev keeps its state there (connection, last error, dial failures).
func newAddressBook(peers []Peer, prev *addressBook) *addressBook {
	b := &addressBook{peers: peers, byID: make(map[peer.ID]int, len(peers)), states: make(map[peer.ID]*peerState, len(peers))}
	for i, p := range peers {
		b.byID[p.ID] = i
		if prev != nil && prev.states[p.ID] != nil {
			b.states[p.ID] = prev.states[p.ID]
			continue
		}
		b.states[p.ID] = newPeerState()
	}
	return b
}

// CheckBook reports whether SetBook would take peers, changing nothing.
func (h *Host) CheckBook(peers []Peer) error {
	_, err := validateBook(h.ID(), peers)
	return err
}

// BookChange is what SetBook changed in the address book.
type BookChange struct {
	// Added are the peers now in the book that were not before; Removed
	// the peers that left it; Readdressed the peers whose configured
	// addresses changed. Each in address-book order.
	Added, Removed, Readdressed []Peer
}

// SetBook replaces the address book with peers, validated as NewHost
// validates them, while the host runs. The gater admits the new book at
// once. A peer that left the book is refused from then on, its dialer
// stops, its connections are closed and its addresses forgotten; mDNS
// ignores it. A peer that joined is dialed (once the host is started); a
// peer whose addresses changed is dialed at the new ones. The callbacks set
// by Notify are not called for the removed peers' lost connections: the
// caller knows they are gone.
func (h *Host) SetBook(peers []Peer) (BookChange, error) {
	book, err := validateBook(h.ID(), peers)
	if err != nil {
		return BookChange{}, err
	}
	h.bookMu.Lock()
	defer h.bookMu.Unlock()
	prev := h.book.Load()
	next := newAddressBook(book, prev)
	var ch BookChange
	for _, p := range book {
		i, ok := prev.byID[p.ID]
		switch {
		case !ok:
			ch.Added = append(ch.Added, p)
		case !slices.EqualFunc(prev.peers[i].Addrs, p.Addrs, func(a, b multiaddr.Multiaddr) bool { return a.Equal(b) }):
			ch.Readdressed = append(ch.Readdressed, p)
		}
	}
	for _, p := range prev.peers {
		if _, ok := next.byID[p.ID]; !ok {
			ch.Removed = append(ch.Removed, p)
		}
	}
	ids := make([]peer.ID, len(book))
	for i, p := range book {
		ids[i] = p.ID
	}
	// Refuse the removed peers before anything else, so that no dial or
	// handshake admits them again while their connections close.
	h.gater.SetAllowed(ids)
	h.book.Store(next)
	ps := h.h.Peerstore()
	cm := h.h.ConnManager()
	for _, p := range ch.Added {
		ps.AddAddrs(p.ID, p.Addrs, peerstore.PermanentAddrTTL)
		cm.Protect(p.ID, protectTag)
	}
	for _, p := range ch.Readdressed {
		old := prev.peers[prev.byID[p.ID]].Addrs
		ps.SetAddrs(p.ID, old, 0)
		ps.AddAddrs(p.ID, p.Addrs, peerstore.PermanentAddrTTL)
		next.states[p.ID].nudge()
	}
	h.mu.Lock()
	for _, p := range ch.Removed {
		if stop, ok := h.dialers[p.ID]; ok {
			stop()
			delete(h.dialers, p.ID)
		}
	}
	if h.started && !h.closed {
		for _, p := range ch.Added {
			h.startDialer(p, next.states[p.ID])
		}
	}
	h.mu.Unlock()
	for _, p := range ch.Removed {
		cm.Unprotect(p.ID, protectTag)
		ps.ClearAddrs(p.ID)
		if err := h.h.Network().ClosePeer(p.ID); err != nil {
			h.logger.Warn("closing the connections of a peer removed from the address book", "peer", p.Name, "err", err)
		}
		h.logger.Info("address-book peer removed; its connections are closed and it is refused from now on", "peer", fmt.Sprintf("%s (%s)", p.Name, shortID(p.ID)))
	}
	for _, p := range ch.Added {
		h.logger.Info("address-book peer added", "peer", h.describe(p.ID), "addrs", fmt.Sprint(p.Addrs))
	}
	return ch, nil
}
