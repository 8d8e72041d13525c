package node

import (
	"context"
	"fmt"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	manet "github.com/multiformats/go-multiaddr/net"
)

// AddPeer adds a partner's peer card to the config file and reloads it, as
// `bandit-node peers add` does (config.AddPeerCard): the card is checked,
// the file replaced atomically, and the new config put in force. A card
// refused leaves the file as it was; a config the reload refuses stays in
// the file, and the error says so.
func (n *Node) AddPeer(ctx context.Context, card []byte) (apitype.PeerAdded, error) {
	path := n.config().Path
	if path == "" {
		return apitype.PeerAdded{}, config.ErrNoConfigFile
	}
	n.editMu.Lock()
	defer n.editMu.Unlock()
	p, _, err := config.AddPeerCard(path, card, n.reg, n.host.ID().String())
	if err != nil {
		return apitype.PeerAdded{}, err
	}
	n.log.Info("peer card added to the config", "peer", p.Name, "peer_id", p.PeerID, "config", path)
	out := apitype.PeerAdded{Name: p.Name, PeerID: p.PeerID}
	if out.Change, err = n.Reload(ctx); err != nil {
		return out, fmt.Errorf("the card is saved in %s, but the running daemon refused the new config: %w", path, err)
	}
	return out, nil
}

// refusedPeers lists the peers the gater refused on inbound connections,
// with this node's own peer card to send their operators.
func (n *Node) refusedPeers() apitype.RefusedPeers {
	out := apitype.RefusedPeers{Refused: []apitype.RefusedPeer{}}
	var addrs []string
	for _, a := range n.host.Addrs() {
		addrs = append(addrs, a.String())
	}
	ifaces, err := manet.InterfaceMultiaddrs()
	if err != nil {
		n.log.Debug("listing this machine's interfaces for the peer card", "err", err)
	}
	if out.PeerCard, err = config.PeerCard(n.config().Node.Name, n.host.ID().String(), addrs, ifaces); err != nil {
		n.log.Warn("writing this node's peer card", "err", err)
	}
	for _, r := range n.host.Gater().Refusals() {
		rp := apitype.RefusedPeer{PeerID: r.ID.String(), First: r.First.UTC(), Last: r.Last.UTC(), Count: r.Count}
		if r.Addr != nil {
			rp.Addr = r.Addr.String()
		}
		out.Refused = append(out.Refused, rp)
	}
	return out
}
