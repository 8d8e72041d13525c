package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// peerCard renders this node's [[peers]] block, ready to paste into a peer's
// config or to give to `peers add`: its name, peer ID and addresses, each
// with the /p2p/ID suffix. listen are the addresses it listens on (the
// daemon's, or the configured ones); an unspecified one (0.0.0.0, ::) is
// replaced by the addresses of this machine's interfaces, ifaces, with a
// comment telling the operator to check them.
func peerCard(name, id string, listen []string, ifaces []multiaddr.Multiaddr) (string, error) {
	var addrs, notes []string
	for _, a := range listen {
		ma, err := multiaddr.NewMultiaddr(a)
		if err != nil {
			return "", fmt.Errorf("listen address %q: %w", a, err)
		}
		ma, _ = peer.SplitAddr(ma) // a /p2p/ suffix, if any, is added back below
		if !manet.IsIPUnspecified(ma) {
			addrs = append(addrs, ma.String())
			continue
		}
		var resolved []multiaddr.Multiaddr
		if ri := reachable(ifaces); len(ri) > 0 {
			// (Given no interface, the resolver would list them itself.)
			resolved, err = manet.ResolveUnspecifiedAddresses([]multiaddr.Multiaddr{ma}, ri)
		}
		if err != nil || len(resolved) == 0 {
			notes = append(notes, fmt.Sprintf("# %s listens on every interface, but none was found: write this machine's address here", ma))
			continue
		}
		notes = append(notes, fmt.Sprintf("# %s listens on every interface: below are this machine's interface addresses.", ma))
		for _, r := range resolved {
			addrs = append(addrs, r.String())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Peer card of %s. Add it to a peer's address book with\n#   bandit-node peers add --config FILE CARD\n", name)
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	if len(notes) > 0 {
		b.WriteString("# Check that the peers can reach these addresses (behind NAT or a firewall,\n# give the public address and port instead).\n")
	}
	fmt.Fprintf(&b, "[[peers]]\nname = %q\npeer_id = %q\naddrs = [\n", name, id)
	for _, a := range addrs {
		fmt.Fprintf(&b, "  %q,\n", a+"/p2p/"+id)
	}
	b.WriteString("]\n")
	return b.String(), nil
}

// reachable keeps the interface addresses a peer on another machine might
// dial: not loopback, not IPv6 link-local — unless there is nothing else.
func reachable(ifaces []multiaddr.Multiaddr) []multiaddr.Multiaddr {
	var out []multiaddr.Multiaddr
	for _, a := range ifaces {
		if !manet.IsIPLoopback(a) && !manet.IsIP6LinkLocal(a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return ifaces
	}
	return out
}

// parsePeerCard decodes a card: TOML holding exactly one [[peers]] entry and
// nothing else (an unknown key is an error naming it).
func parsePeerCard(text []byte) (config.PeerConfig, error) {
	var card struct {
		Peers []config.PeerConfig `toml:"peers"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(text)).Decode(&card)
	if err != nil {
		return config.PeerConfig{}, err
	}
	if u := md.Undecoded(); len(u) > 0 {
		keys := make([]string, len(u))
		for i, k := range u {
			keys[i] = k.String()
		}
		return config.PeerConfig{}, fmt.Errorf("unknown key %s (a card holds one [[peers]] block: name, peer_id, addrs)", strings.Join(keys, ", "))
	}
	if len(card.Peers) != 1 {
		return config.PeerConfig{}, fmt.Errorf("a card holds exactly one [[peers]] block, this one holds %d", len(card.Peers))
	}
	p := card.Peers[0]
	if p.Name == "" {
		return config.PeerConfig{}, errors.New("peers.name: must not be empty")
	}
	if _, err := peer.Decode(p.PeerID); err != nil {
		return config.PeerConfig{}, fmt.Errorf("peers.peer_id: %q is not a peer ID: %w", p.PeerID, err)
	}
	return p, nil
}
