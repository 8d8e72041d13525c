package sessions

import (
	"fmt"
	"sync/atomic"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// liveConfig is one version of what a running node reads of its config: the
// config and the address book built from it. It is never modified; a reload
// replaces it whole (Runtime.Reconfigure), and a session keeps the one it was
// created under.
type liveConfig struct {
	cfg   *config.Config
	names map[peer.ID]string // address-book names, and this node's own
	ids   map[string]peer.ID // the reverse
	// peerBuf counts, for every address-book peer, the bytes of its
	// frames queued in this node's sessions (inbound.go). A peer that
	// stays in the book across a reload keeps its counter.
	peerBuf map[peer.ID]*peerBuffer
}

// newLiveConfig indexes book, the address book of cfg (addressBook), with
// this node's own ID self (none yet if ""). Peers also in prev keep their
// buffer counters.
func newLiveConfig(cfg *config.Config, self peer.ID, book []p2p.Peer, prev *liveConfig) *liveConfig {
	l := &liveConfig{cfg: cfg, names: map[peer.ID]string{}, ids: map[string]peer.ID{}, peerBuf: map[peer.ID]*peerBuffer{}}
	for _, p := range book {
		l.names[p.ID] = p.Name
		l.ids[p.Name] = p.ID
		if prev != nil && prev.peerBuf[p.ID] != nil {
			l.peerBuf[p.ID] = prev.peerBuf[p.ID]
		} else {
			l.peerBuf[p.ID] = &peerBuffer{}
		}
	}
	if self != "" {
		l.names[self] = cfg.Node.Name
		l.ids[cfg.Node.Name] = self
	}
	return l
}

// nameOf returns the address-book name of id, or its string form.
func (l *liveConfig) nameOf(id peer.ID) string {
	if name, ok := l.names[id]; ok {
		return name
	}
	return id.String()
}

// addressBook converts cfg's [[peers]] to the p2p host's address book.
func addressBook(cfg *config.Config) ([]p2p.Peer, error) {
	var book []p2p.Peer
	for i, pc := range cfg.Peers {
		id, err := peer.Decode(pc.PeerID)
		if err != nil {
			return nil, fmt.Errorf("peers[%d] (%s).peer_id: %w", i, pc.Name, err)
		}
		var addrs []multiaddr.Multiaddr
		for j, a := range pc.Addrs {
			ma, err := multiaddr.NewMultiaddr(a)
			if err != nil {
				return nil, fmt.Errorf("peers[%d] (%s).addrs[%d]: %q: %w", i, pc.Name, j, a, err)
			}
			addrs = append(addrs, ma)
		}
		var relay peer.ID
		if pc.Relay != "" {
			if relay, err = RelayID(cfg, pc.Relay); err != nil {
				return nil, fmt.Errorf("peers[%d] (%s).relay: %w", i, pc.Name, err)
			}
		}
		book = append(book, p2p.Peer{Name: pc.Name, ID: id, Addrs: addrs, Relay: relay})
	}
	return book, nil
}

// RelayID returns the peer ID of the [[peers]] entry named name, a relay.
func RelayID(cfg *config.Config, name string) (peer.ID, error) {
	rc, ok := cfg.PeerByName(name)
	if !ok {
		return "", fmt.Errorf("%q is not the name of a [[peers]] entry", name)
	}
	id, err := peer.Decode(rc.PeerID)
	if err != nil {
		return "", fmt.Errorf("the peer ID of relay %s: %w", name, err)
	}
	return id, nil
}

// peerBuffer counts the bytes queued on this node from one peer, over all
// its sessions; peak is the most it has held.
type peerBuffer struct {
	bytes atomic.Int64
	peak  atomic.Int64
}

// reserve adds n bytes unless that takes the count over limit, and keeps
// peak.
func (b *peerBuffer) reserve(n, limit int64) bool {
	v := b.bytes.Add(n)
	if v > limit {
		b.bytes.Add(-n)
		return false
	}
	for {
		p := b.peak.Load()
		if v <= p || b.peak.CompareAndSwap(p, v) {
			return true
		}
	}
}
