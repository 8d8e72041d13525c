package p2p

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// maxRememberedRefusals caps how many refused peer IDs a Gater remembers in
// order to log each of them only once. When the set is full it is emptied, so
// memory stays bounded even if an attacker cycles through fresh identities.
const maxRememberedRefusals = 1024

// Gater is a connmgr.ConnectionGater that admits only the peers of the address
// book. Dials to, and secured connections from, any other peer ID are refused.
// Each refused peer ID is logged once (within a bounded memory), and every
// refusal is counted.
type Gater struct {
	allowed map[peer.ID]struct{} // immutable after NewGater
	logger  *slog.Logger
	refused atomic.Uint64
	// dialAddr, if set (by the Host, before use), decides which addresses
	// of an allowed peer may be dialed.
	dialAddr func(peer.ID, multiaddr.Multiaddr) bool

	mu     sync.Mutex           // guards logged
	logged map[peer.ID]struct{} // refused IDs already logged; at most maxRememberedRefusals
}

var _ connmgr.ConnectionGater = (*Gater)(nil)

// NewGater returns a gater admitting exactly the peers in allowed. A nil logger
// discards log output.
func NewGater(allowed []peer.ID, logger *slog.Logger) *Gater {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Gater{
		allowed: make(map[peer.ID]struct{}, len(allowed)),
		logger:  logger,
		logged:  make(map[peer.ID]struct{}),
	}
	for _, id := range allowed {
		g.allowed[id] = struct{}{}
	}
	return g
}

// Allowed reports whether id is in the gater's address book.
func (g *Gater) Allowed(id peer.ID) bool {
	_, ok := g.allowed[id]
	return ok
}

// Refused returns how many dials and connections the gater has refused.
func (g *Gater) Refused() uint64 {
	return g.refused.Load()
}

// InterceptPeerDial refuses to dial a peer that is not in the address book.
func (g *Gater) InterceptPeerDial(id peer.ID) bool {
	return g.check(id, "dial to")
}

// InterceptAddrDial allows the addresses of a peer that passed
// InterceptPeerDial, as the host's dial policy says (every address if it has
// none).
func (g *Gater) InterceptAddrDial(id peer.ID, a multiaddr.Multiaddr) bool {
	return g.dialAddr == nil || g.dialAddr(id, a)
}

// InterceptAccept allows the connection to proceed to the security handshake;
// the remote peer ID is not known before it.
func (g *Gater) InterceptAccept(network.ConnMultiaddrs) bool {
	return true
}

// InterceptSecured refuses a connection, in either direction, whose
// authenticated remote peer is not in the address book.
func (g *Gater) InterceptSecured(dir network.Direction, id peer.ID, _ network.ConnMultiaddrs) bool {
	if dir == network.DirInbound {
		return g.check(id, "inbound connection from")
	}
	return g.check(id, "outbound connection to")
}

// InterceptUpgraded allows a connection that passed InterceptSecured.
func (g *Gater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}

// check reports whether id is allowed, counting and (once per ID) logging a refusal.
func (g *Gater) check(id peer.ID, what string) bool {
	if g.Allowed(id) {
		return true
	}
	g.refused.Add(1)
	g.mu.Lock()
	_, seen := g.logged[id]
	if !seen {
		if len(g.logged) >= maxRememberedRefusals {
			clear(g.logged)
		}
		g.logged[id] = struct{}{}
	}
	g.mu.Unlock()
	if !seen {
		g.logger.Warn("refused "+what+" a peer that is not in the address book (further refusals of this peer are not logged)", "peer", id.String())
	}
	return false
}
