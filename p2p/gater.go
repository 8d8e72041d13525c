package p2p

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// MaxListedRefusals caps how many peers that tried to connect without being
// in the address book a Gater lists (Refusals): when the list is full, the
// peer seen longest ago makes room for a new one.
const MaxListedRefusals = 64

// Refusal is a peer that tried to connect without being in the address
// book: the last address it came from, when it first and last tried, and
// how many times.
type Refusal struct {
	ID peer.ID
	// Addr is the remote address of its last attempt.
	Addr        multiaddr.Multiaddr
	First, Last time.Time
	Count       uint64
}

// Gater is a connmgr.ConnectionGater that admits only the peers of the address
// book. Dials to, and secured connections from, any other peer ID are refused.
// Each refused peer ID is logged once (within a bounded memory), and every
// refusal is counted. The allowed set can be replaced while libp2p calls the
// gater (SetAllowed): each call sees either the old set or the new one.
type Gater struct {
	// allowed is the set of admitted peers; the map is never modified,
	// only replaced whole.
	allowed atomic.Pointer[map[peer.ID]struct{}]
	logger  *slog.Logger
	refused atomic.Uint64
	// dialAddr, if set (by the Host, before use), decides which addresses
	// of an allowed peer may be dialed.
	dialAddr func(peer.ID, multiaddr.Multiaddr) bool

	mu     sync.Mutex           // guards logged and inbound
	logged map[peer.ID]struct{} // refused IDs already logged; at most maxRememberedRefusals
	// inbound are the peers refused on an inbound connection, once each;
	// at most MaxListedRefusals.
	inbound map[peer.ID]*Refusal
	// now is the gater's clock (time.Now; a test's own).
	now func() time.Time
}

var _ connmgr.ConnectionGater = (*Gater)(nil)

// NewGater returns a gater admitting exactly the peers in allowed. A nil logger
// discards log output.
func NewGater(allowed []peer.ID, logger *slog.Logger) *Gater {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Gater{
		logger:  logger,
		logged:  make(map[peer.ID]struct{}),
		inbound: make(map[peer.ID]*Refusal),
		now:     time.Now,
	}
	g.SetAllowed(allowed)
	return g
}

// SetAllowed replaces the set of admitted peers. It is safe to call while
// libp2p runs the gater's callbacks; it does not close the connections of
// peers it no longer admits (Host.SetBook does).
func (g *Gater) SetAllowed(allowed []peer.ID) {
	m := make(map[peer.ID]struct{}, len(allowed))
	for _, id := range allowed {
		m[id] = struct{}{}
	}
	g.allowed.Store(&m)
	// A peer admitted again is logged again if it is refused later.
	g.mu.Lock()
	for _, id := range allowed {
		delete(g.logged, id)
		delete(g.inbound, id)
	}
	g.mu.Unlock()
}

// Allowed reports whether id is in the gater's address book.
func (g *Gater) Allowed(id peer.ID) bool {
	_, ok := (*g.allowed.Load())[id]
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
func (g *Gater) InterceptSecured(dir network.Direction, id peer.ID, addrs network.ConnMultiaddrs) bool {
	if dir == network.DirInbound {
		ok := g.check(id, "inbound connection from")
		if !ok {
			var remote multiaddr.Multiaddr
			if addrs != nil {
				remote = addrs.RemoteMultiaddr()
			}
			g.noteInbound(id, remote)
		}
		return ok
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

// noteInbound lists id, refused on an inbound connection from remote, or
// counts one more attempt of a peer listed already.
func (g *Gater) noteInbound(id peer.ID, remote multiaddr.Multiaddr) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.inbound[id]; ok {
		r.Last, r.Count = now, r.Count+1
		if remote != nil {
			r.Addr = remote
		}
		return
	}
	if len(g.inbound) >= MaxListedRefusals {
		var oldest *Refusal
		for _, r := range g.inbound {
			if oldest == nil || r.Last.Before(oldest.Last) {
				oldest = r
			}
		}
		delete(g.inbound, oldest.ID)
	}
	g.inbound[id] = &Refusal{ID: id, Addr: remote, First: now, Last: now, Count: 1}
}

// Refusals lists the peers that tried to connect without being in the
// address book since the gater started (at most MaxListedRefusals, the
// most recent), most recent attempt first. A peer that joins the address
// book (SetAllowed) leaves the list.
func (g *Gater) Refusals() []Refusal {
	g.mu.Lock()
	out := make([]Refusal, 0, len(g.inbound))
	for _, r := range g.inbound {
		out = append(out, *r)
	}
	g.mu.Unlock()
	slices.SortFunc(out, func(a, b Refusal) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	return out
}
