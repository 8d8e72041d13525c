package p2p

import (
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Two daemons that dial each other at the same moment — every pair of a
// testnet started at once, or two peers back after a network outage — end up
// with two connections. Left alone, each end may open its streams on a
// different one: the pair's traffic then runs over two one-way TCP
// connections, each data segment answered by a bare ACK, and both
// connections keep their own keep-alives and read and write goroutines. So
// both ends choose, by the same rule, one connection for their streams
// (preferredConn), and a duplicate that carries no stream but libp2p's own
// (identify, ping, gossipsub, which all reopen theirs on the remaining
// connection) is closed a few seconds after it appears.

// dupGrace is how long after a duplicate connection appears it is closed:
// long enough for a simultaneous dial's other handshake to finish and for
// identify to run, so both ends see both connections when they choose.
const dupGrace = 3 * time.Second

// dupRetry is how often a duplicate that still carries streams of ours is
// looked at again. The messenger retires an idle stream after half its idle
// timeout and opens new ones on the preferred connection, so a duplicate
// frees up eventually.
const dupRetry = time.Minute

// preferredConn returns the connection of conns (all to one peer) that both
// ends of the pair choose for new streams: open and unlimited; direct
// before relayed (a relayed connection that hole punching upgraded becomes
// the duplicate, closed once idle); TCP before
// anything else (see tcpFirstRanker); dialed by the peer whose ID sorts
// first — the rule both ends can evaluate the same way —; and of those the
// oldest. selfLower reports whether this host's ID sorts before the peer's.
// It returns nil if no connection is usable.
func preferredConn(selfLower bool, conns []network.Conn) network.Conn {
	var best network.Conn
	var bestRank connRank
	for _, c := range conns {
		if c.IsClosed() || c.Stat().Limited {
			continue
		}
		r := rankConn(selfLower, c)
		if best == nil || r.before(bestRank) {
			best, bestRank = c, r
		}
	}
	return best
}

// connRank is what preferredConn orders connections by.
type connRank struct {
	direct    bool // not through a circuit relay
	tcp       bool
	lowerDial bool // dialed by the peer whose ID sorts first
	opened    time.Time
}

func rankConn(selfLower bool, c network.Conn) connRank {
	st := c.Stat()
	direct := !isCircuit(c.RemoteMultiaddr())
	return connRank{
		direct:    direct,
		tcp:       direct && isTCP(c.RemoteMultiaddr()),
		lowerDial: st.Direction != network.DirUnknown && (st.Direction == network.DirOutbound) == selfLower,
		opened:    st.Opened,
	}
}

func (r connRank) before(o connRank) bool {
	if r.direct != o.direct {
		return r.direct
	}
	if r.tcp != o.tcp {
		return r.tcp
	}
	if r.lowerDial != o.lowerDial {
		return r.lowerDial
	}
	return r.opened.Before(o.opened)
}

// bestConn returns the connection to id that new streams go on.
func (h *Host) bestConn(id peer.ID) network.Conn {
	return preferredConn(h.h.ID() < id, h.h.Network().ConnsToPeer(id))
}

// libp2pProtocols are the protocols whose streams may be cut by closing a
// duplicate connection: their owners open a new stream on the connection
// that remains.
var libp2pProtocols = []string{"/ipfs/id/", "/ipfs/ping/", "/meshsub/", "/floodsub/"}

// expendable reports whether closing s's connection loses nothing.
func expendable(s network.Stream) bool {
	p := string(s.Protocol())
	for _, prefix := range libp2pProtocols {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// watchDuplicates schedules a look at id's connections dupGrace from now, if
// it has more than one and no look is pending.
func (h *Host) watchDuplicates(id peer.ID) {
	st, ok := h.book.Load().states[id]
	if !ok || len(h.h.Network().ConnsToPeer(id)) < 2 {
		return
	}
	h.scheduleDupCheck(st, id, h.dupGrace)
}

func (h *Host) scheduleDupCheck(st *peerState, id peer.ID, after time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.dupCheck != nil {
		return
	}
	st.dupCheck = time.AfterFunc(after, func() {
		st.mu.Lock()
		st.dupCheck = nil
		st.mu.Unlock()
		if h.dialCtx.Err() != nil {
			return // the host is closing
		}
		if busy := h.closeDuplicates(id); busy {
			h.scheduleDupCheck(st, id, dupRetry)
		}
	})
}

// closeDuplicates closes every connection to id but the preferred one,
// unless it carries a stream other than libp2p's own. It reports whether a
// duplicate was left open for that reason.
func (h *Host) closeDuplicates(id peer.ID) (busy bool) {
	conns := h.h.Network().ConnsToPeer(id)
	keep := preferredConn(h.h.ID() < id, conns)
	if keep == nil {
		return false
	}
	for _, c := range conns {
		if c == keep || c.IsClosed() {
			continue
		}
		if !allExpendable(c.GetStreams()) {
			busy = true
			continue
		}
		h.logger.Debug("closing a duplicate connection", "peer", h.describe(id), "closed", c.RemoteMultiaddr().String(), "kept", keep.RemoteMultiaddr().String())
		c.Close()
	}
	return busy
}

func allExpendable(streams []network.Stream) bool {
	for _, s := range streams {
		if !expendable(s) {
			return false
		}
	}
	return true
}
