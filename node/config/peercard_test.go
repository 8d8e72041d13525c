package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/multiformats/go-multiaddr"
)

func TestPeerCard(t *testing.T) {
	const id = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
	ifaces := []multiaddr.Multiaddr{multiaddr.StringCast("/ip4/127.0.0.1"), multiaddr.StringCast("/ip4/192.168.1.5"),
		multiaddr.StringCast("/ip6/::1"), multiaddr.StringCast("/ip6/fe80::1"), multiaddr.StringCast("/ip6/2001:db8::5")}
	tests := []struct {
		name      string
		listen    []string
		ifaces    []multiaddr.Multiaddr
		wantAddrs []string
		wantNote  string
	}{
		{"specific addresses", []string{"/ip4/10.0.0.2/tcp/4001", "/ip4/10.0.0.2/udp/4001/quic-v1"}, ifaces,
			[]string{"/ip4/10.0.0.2/tcp/4001/p2p/" + id, "/ip4/10.0.0.2/udp/4001/quic-v1/p2p/" + id}, ""},
		{"every IPv4 interface", []string{"/ip4/0.0.0.0/tcp/4001"}, ifaces,
			[]string{"/ip4/192.168.1.5/tcp/4001/p2p/" + id}, "# /ip4/0.0.0.0/tcp/4001 listens on every interface"},
		{"every IPv6 interface", []string{"/ip6/::/tcp/4001"}, ifaces,
			[]string{"/ip6/2001:db8::5/tcp/4001/p2p/" + id}, "listens on every interface"},
		{"loopback only", []string{"/ip4/0.0.0.0/tcp/4001"}, ifaces[:1],
			[]string{"/ip4/127.0.0.1/tcp/4001/p2p/" + id}, "Check that the peers can reach these addresses"},
		{"no interface", []string{"/ip4/0.0.0.0/tcp/4001"}, nil, nil, "none was found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := PeerCard("acme", id, tc.listen, tc.ifaces)
			if err != nil {
				t.Fatal(err)
			}
			card, err := ParsePeerCard([]byte(text))
			if err != nil {
				t.Fatalf("the card does not parse: %v\n%s", err, text)
			}
			if card.Name != "acme" || card.PeerID != id || fmt.Sprint(card.Addrs) != fmt.Sprint(tc.wantAddrs) {
				t.Errorf("card = %+v, want addrs %v\n%s", card, tc.wantAddrs, text)
			}
			if !strings.Contains(text, tc.wantNote) {
				t.Errorf("card lacks %q:\n%s", tc.wantNote, text)
			}
		})
	}
}

func TestParsePeerCardRefuses(t *testing.T) {
	const id = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
	tests := []struct{ name, text, want string }{
		{"empty", "", "exactly one [[peers]] block, this one holds 0"},
		{"two", "[[peers]]\nname = \"a\"\npeer_id = \"" + id + "\"\n[[peers]]\nname = \"b\"\npeer_id = \"" + id + "\"\n", "holds 2"},
		{"unknown key", "[[peers]]\nname = \"a\"\npeer_id = \"" + id + "\"\ncolour = 1\n", "unknown key peers.colour"},
		{"other table", "[node]\nname = \"a\"\n[[peers]]\nname = \"a\"\npeer_id = \"" + id + "\"\n", "unknown key node"},
		{"no name", "[[peers]]\npeer_id = \"" + id + "\"\n", "peers.name"},
		{"bad id", "[[peers]]\nname = \"a\"\npeer_id = \"nope\"\n", "peers.peer_id"},
		{"not TOML", "[[peers]\n", "toml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParsePeerCard([]byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParsePeerCard: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestCheckNewPeer: a card of a peer the address book has is of the class
// ErrPeerKnown, this node's own of ErrBadPeerCard, each saying why in its
// own words; a new peer passes.
func TestCheckNewPeer(t *testing.T) {
	const known, other, self = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx", "12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq", "12D3KooWMt4E5CzKXVU4uUrLdqo1VN9PxafwDeXffe9XgG9Y3V5q"
	cfg := &Config{Node: NodeConfig{Name: "acme"}, Peers: []PeerConfig{{Name: "globex", PeerID: known}}}
	for _, c := range []struct {
		name  string
		card  PeerConfig
		class error
		want  string
	}{
		{"new", PeerConfig{Name: "initech", PeerID: other}, nil, ""},
		{"known name", PeerConfig{Name: "globex", PeerID: other}, ErrPeerKnown, `already has a peer named "globex"`},
		{"known ID", PeerConfig{Name: "initech", PeerID: known}, ErrPeerKnown, "already has peer ID " + known},
		{"own name", PeerConfig{Name: "acme", PeerID: other}, ErrBadPeerCard, "this node's own name"},
		{"own ID", PeerConfig{Name: "initech", PeerID: self}, ErrBadPeerCard, "its own card"},
	} {
		err := cfg.CheckNewPeer(c.card, self)
		switch {
		case c.class == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.class != nil && (!errors.Is(err, c.class) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.class.Error()+":")):
			t.Errorf("%s: %v, want of class %q saying %q", c.name, err, c.class, c.want)
		}
	}
}
