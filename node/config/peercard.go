package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// A peer card is a node's [[peers]] block, which an operator sends the
// operators of its partners for their address books: `bandit-node id
// --peer-card` writes it, `bandit-node peers add` (and the control API's
// POST /v0/peers) adds it to a config file.

// MaxPeerCardSize bounds a peer card read from a file, stdin or a request.
const MaxPeerCardSize = 64 << 10

// ErrBadPeerCard is the class of a card that is not one well-formed
// [[peers]] block, or that names this node itself.
var ErrBadPeerCard = errors.New("not a peer card")

// ErrPeerKnown is the class of a card whose name or peer ID the address book
// already has.
var ErrPeerKnown = errors.New("already in the address book")

// classed is an error of a class (ErrBadPeerCard, ErrPeerKnown) whose
// message is its own: errors.Is finds the class, the operator reads err.
type classed struct{ class, err error }

func (c classed) Error() string       { return c.err.Error() }
func (c classed) Unwrap() []error     { return []error{c.class, c.err} }
func classify(class, err error) error { return classed{class, err} }

// PeerCard renders a node's [[peers]] block, ready to paste into a peer's
// config or to give to `peers add`: its name, peer ID and addresses, each
// with the /p2p/ID suffix. listen are the addresses it listens on (the
// daemon's, or the configured ones); an unspecified one (0.0.0.0, ::) is
// replaced by the addresses of this machine's interfaces, ifaces, with a
// comment telling the operator to check them.
func PeerCard(name, id string, listen []string, ifaces []multiaddr.Multiaddr) (string, error) {
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

// ParsePeerCard decodes a card: TOML holding exactly one [[peers]] entry and
// nothing else (an unknown key is an error naming it). Its errors are of
// the class ErrBadPeerCard (errors.Is).
func ParsePeerCard(text []byte) (PeerConfig, error) {
	p, err := parsePeerCard(text)
	if err != nil {
		return PeerConfig{}, classify(ErrBadPeerCard, err)
	}
	return p, nil
}

func parsePeerCard(text []byte) (PeerConfig, error) {
	if len(text) > MaxPeerCardSize {
		return PeerConfig{}, fmt.Errorf("larger than %d bytes; a card is one [[peers]] block", MaxPeerCardSize)
	}
	var card struct {
		Peers []PeerConfig `toml:"peers"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(text)).Decode(&card)
	if err != nil {
		return PeerConfig{}, err
	}
	if u := md.Undecoded(); len(u) > 0 {
		keys := make([]string, len(u))
		for i, k := range u {
			keys[i] = k.String()
		}
		return PeerConfig{}, fmt.Errorf("unknown key %s (a card holds one [[peers]] block: name, peer_id, addrs)", strings.Join(keys, ", "))
	}
	if len(card.Peers) != 1 {
		return PeerConfig{}, fmt.Errorf("a card holds exactly one [[peers]] block, this one holds %d", len(card.Peers))
	}
	p := card.Peers[0]
	if p.Name == "" {
		return PeerConfig{}, errors.New("peers.name: must not be empty")
	}
	if _, err := peer.Decode(p.PeerID); err != nil {
		return PeerConfig{}, fmt.Errorf("peers.peer_id: %q is not a peer ID: %w", p.PeerID, err)
	}
	return p, nil
}

// CheckNewPeer refuses a card whose name or peer ID the address book, or
// this node itself, already has; self is this node's peer ID ("" if not
// known). A known peer's error is of the class ErrPeerKnown, this node's
// own card's of ErrBadPeerCard (errors.Is).
func (c *Config) CheckNewPeer(card PeerConfig, self string) error {
	id, err := peer.Decode(card.PeerID)
	if err != nil {
		return classify(ErrBadPeerCard, fmt.Errorf("peers.peer_id: %q is not a peer ID: %w", card.PeerID, err))
	}
	if card.Name == c.Node.Name {
		return classify(ErrBadPeerCard, fmt.Errorf("%q is this node's own name (node.name)", card.Name))
	}
	if self != "" && self == id.String() {
		return classify(ErrBadPeerCard, fmt.Errorf("%s is this node's own peer ID: this is its own card", id))
	}
	for i, p := range c.Peers {
		other, _ := peer.Decode(p.PeerID)
		switch {
		case p.Name == card.Name:
			return classify(ErrPeerKnown, fmt.Errorf("the address book already has a peer named %q (peers[%d], %s)", p.Name, i, p.PeerID))
		case other == id:
			return classify(ErrPeerKnown, fmt.Errorf("the address book already has peer ID %s, named %q (peers[%d])", id, p.Name, i))
		}
	}
	return nil
}

// AppendPeerCard returns the config text old with the card appended after
// a blank line: the existing text, comments included, is kept as it is.
func AppendPeerCard(old, card []byte) []byte {
	out := append([]byte{}, old...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, '\n')
	out = append(out, card...)
	if len(card) > 0 && card[len(card)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// AddPeerCard adds the peer card text to the config file at path: the card
// must be one [[peers]] block (ParsePeerCard) of a peer neither the file's
// address book nor this node (self: its peer ID, "" if not known) has
// (CheckNewPeer), and the file with it must load as a daemon of registry
// reg loads it. The file is then replaced atomically (WriteFileAtomic); a
// refused card leaves it as it was. Returns the card's peer and the new
// config.
func AddPeerCard(path string, text []byte, reg *protocol.Registry, self string) (PeerConfig, *Config, error) {
	card, err := ParsePeerCard(text)
	if err != nil {
		return PeerConfig{}, nil, err
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return PeerConfig{}, nil, fmt.Errorf("reading the config: %w", err)
	}
	cur, err := ParseConfig(path, old, reg)
	if err != nil {
		return PeerConfig{}, nil, fmt.Errorf("the config file does not load as it is, so no card is added to it: %w", err)
	}
	if err := cur.CheckNewPeer(card, self); err != nil {
		return PeerConfig{}, nil, err
	}
	next := AppendPeerCard(old, text)
	cfg, err := ParseConfig(path, next, reg)
	if err != nil {
		return PeerConfig{}, nil, classify(ErrBadPeerCard, fmt.Errorf("the config with this card would not load, so it is left as it was: %w", err))
	}
	if err := WriteFileAtomic(path, next); err != nil {
		return PeerConfig{}, nil, err
	}
	return card, cfg, nil
}

// WriteFileAtomic replaces path with data: it writes a temporary file in the
// same directory with path's mode, syncs it and renames it over path, so a
// reader (the daemon reloading) sees the old file or the new one, whole.
func WriteFileAtomic(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing the config: %w", err)
	}
	done = true
	return nil
}
