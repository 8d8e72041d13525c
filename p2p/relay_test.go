package p2p

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	circuitproto "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
)

// newRelayHost starts a host named name with the given book and options.
func newRelayHost(t *testing.T, name string, key Config, peers []Peer) *Host {
	t.Helper()
	cfg := key
	cfg.ListenAddrs = loopbackTCP(t)
	cfg.Logger = testLogger(t).With("node", name)
	cfg.DialBackoffMin, cfg.DialBackoffMax = 20*time.Millisecond, 200*time.Millisecond
	cfg.PingInterval = time.Second
	cfg.Peers = peers
	h, err := NewHost(cfg)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

const echoProto = protocol.ID("/bandit-test/echo/1")

// echo serves echoProto on h: it copies the stream back.
func echo(h *Host) {
	h.LibP2P().SetStreamHandler(echoProto, func(s network.Stream) {
		defer s.Close()
		io.Copy(s, s)
	})
}

// TestRelayReachesNATedPeerAndRefusesStrangers: pub reaches nat, which it
// has no address of, through relay's circuit, with more data than relay
// v2's default limit; a stranger gets no reservation and no connection
// through the relay; a peer the relay serves but nat does not know is
// refused by nat's gater on the relayed connection.
func TestRelayReachesNATedPeerAndRefusesStrangers(t *testing.T) {
	kRelay, idRelay := newKey(t)
	kPub, idPub := newKey(t)
	kNAT, idNAT := newKey(t)
	kD, idD := newKey(t)
	kE, idE := newKey(t)

	relay := newRelayHost(t, "relay", Config{Key: kRelay, RelayService: true}, []Peer{
		{Name: "pub", ID: idPub}, {Name: "nat", ID: idNAT}, {Name: "e", ID: idE},
	})
	relayAddrs := relay.Addrs()
	nat := newRelayHost(t, "nat", Config{Key: kNAT, RelayVia: idRelay}, []Peer{
		{Name: "relay", ID: idRelay, Addrs: relayAddrs}, {Name: "pub", ID: idPub, Relay: idRelay},
	})
	echo(nat)
	pub := newRelayHost(t, "pub", Config{Key: kPub}, []Peer{
		{Name: "relay", ID: idRelay, Addrs: relayAddrs}, {Name: "nat", ID: idNAT, Relay: idRelay},
	})
	for _, h := range []*Host{relay, nat, pub} {
		h.Start(t.Context())
	}
	waitFor(t, "pub to connect to nat through the relay", func() bool { return pub.ConnKind(idNAT) == ConnRelayed })
	waitFor(t, "nat to see pub's relayed connection", func() bool { return nat.ConnKind(idPub) == ConnRelayed })
	for _, ps := range pub.Peers() {
		want := map[string]string{"relay": ConnDirect, "nat": ConnRelayed}[ps.Name]
		if ps.Conn != want {
			t.Errorf("pub's status of %s: Conn = %q, want %q", ps.Name, ps.Conn, want)
		}
	}

	// 512 KiB each way: relay v2's default limit (128 KiB) would cut it.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := pub.LibP2P().NewStream(ctx, idNAT, echoProto)
	if err != nil {
		t.Fatalf("opening a stream from pub to nat through the relay: %v", err)
	}
	if !isCircuit(s.Conn().RemoteMultiaddr()) {
		t.Fatalf("pub's stream to nat runs on %s, not through the relay", s.Conn().RemoteMultiaddr())
	}
	msg := bytes.Repeat([]byte("relayed "), 64<<10)
	go func() {
		s.Write(msg)
		s.CloseWrite()
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("reading the echo through the relay: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo through the relay: got %d bytes, want the %d sent", len(got), len(msg))
	}

	// A stranger, D, knows the relay and nat but is in neither's book.
	d := newRelayHost(t, "stranger", Config{Key: kD}, []Peer{
		{Name: "relay", ID: idRelay, Addrs: relayAddrs}, {Name: "nat", ID: idNAT, Relay: idRelay},
	})
	refusedBefore := relay.Gater().Refused()
	if _, err := client.Reserve(ctx, d.LibP2P(), peer.AddrInfo{ID: idRelay, Addrs: relayAddrs}); err == nil {
		t.Fatal("a stranger got a reservation at the relay")
	}
	if err := d.LibP2P().Connect(ctx, peer.AddrInfo{ID: idNAT}); err == nil {
		t.Fatal("a stranger connected to nat through the relay")
	}
	if relay.Gater().Refused() == refusedBefore {
		t.Error("the relay's gater counted no refusal of the stranger")
	}

	// E is in the relay's book but not in nat's: the relay lets it
	// through, and nat's gater refuses it on the relayed connection.
	e := newRelayHost(t, "e", Config{Key: kE}, []Peer{
		{Name: "relay", ID: idRelay, Addrs: relayAddrs}, {Name: "nat", ID: idNAT, Relay: idRelay},
	})
	natRefused := nat.Gater().Refused()
	// The dialer may finish its handshake before nat's gater refuses
	// the connection, so E's Connect may succeed: what counts is that
	// nat refuses it and no stream gets through.
	e.LibP2P().Connect(ctx, peer.AddrInfo{ID: idNAT})
	waitFor(t, "nat's gater to refuse e's relayed connection", func() bool { return nat.Gater().Refused() > natRefused })
	waitFor(t, "e's relayed connection to nat to close", func() bool { return e.LibP2P().Network().Connectedness(idNAT) != network.Connected })
	if s, err := e.LibP2P().NewStream(ctx, idNAT, echoProto); err == nil {
		s.Close()
		t.Fatal("a peer nat does not know opened a stream to it through the relay")
	}
	if nat.Connected(idE) || nat.Connected(idD) {
		t.Error("nat is connected to a peer outside its book")
	}
}

func TestRelayConfigValidation(t *testing.T) {
	key, self := newKey(t)
	_, a := newKey(t)
	_, b := newKey(t)
	_, stranger := newKey(t)
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" means success
	}{
		{name: "peer behind a book relay", mod: func(c *Config) { c.Peers[1].Relay = a }},
		{name: "this node is the peer's relay", mod: func(c *Config) { c.Peers[1].Relay = self }},
		{name: "reserve at a book peer", mod: func(c *Config) { c.RelayVia = a }},
		{name: "peer is its own relay", mod: func(c *Config) { c.Peers[1].Relay = b }, want: "names itself as its relay"},
		{name: "relay not in the book", mod: func(c *Config) { c.Peers[1].Relay = stranger }, want: "is not in the address book"},
		{name: "reserve at a stranger", mod: func(c *Config) { c.RelayVia = stranger }, want: "is not in the address book"},
		{name: "reserve at itself", mod: func(c *Config) { c.RelayVia = self }, want: "its own relay"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Key: key, ListenAddrs: loopbackTCP(t), Peers: []Peer{{Name: "alpha", ID: a}, {Name: "beta", ID: b}}}
			tc.mod(&cfg)
			checkNewHost(t, cfg, tc.want)
		})
	}
}

// TestRelayLimits: the relay's scopes admit a relayed connection from
// every address-book peer, not the 8 streams a peer of any other service.
func TestRelayLimits(t *testing.T) {
	l := newLimiter()
	if got := l.GetServicePeerLimits(relayv2.ServiceName).GetStreamTotalLimit(); got != limitBookPeers {
		t.Errorf("relay service streams per peer = %d, want %d", got, limitBookPeers)
	}
	for _, p := range []protocol.ID{circuitproto.ProtoIDv2Hop, circuitproto.ProtoIDv2Stop} {
		if got := l.GetProtocolPeerLimits(p).GetStreamTotalLimit(); got != limitBookPeers {
			t.Errorf("%s streams per peer = %d, want %d", p, got, limitBookPeers)
		}
	}
	if got := l.GetServicePeerLimits("some.other.service").GetStreamTotalLimit(); got != limitStreamsPerPeerProtocol {
		t.Errorf("another service's streams per peer = %d, want %d", got, limitStreamsPerPeerProtocol)
	}
	if rc := relayResources(mustDefaults(t, RelayLimits{})); rc.Limit != nil || rc.MaxCircuits != limitBookPeers {
		t.Errorf("relay resources: limit %+v, %d circuits a peer; want no limit and %d", rc.Limit, rc.MaxCircuits, limitBookPeers)
	}
}
