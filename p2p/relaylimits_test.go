package p2p

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	msmux "github.com/multiformats/go-multistream"
)

func mustDefaults(t *testing.T, l RelayLimits) RelayLimits {
	t.Helper()
	l, err := l.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRelayLimitsValidation(t *testing.T) {
	key, _ := newKey(t)
	tests := []struct {
		name   string
		limits RelayLimits
		want   string // substring of the error; "" means success
	}{
		{name: "defaults", limits: RelayLimits{}},
		{name: "all set", limits: RelayLimits{CircuitBytes: 64 << 20, CircuitsPerPeer: 4, Reservations: 10}},
		{name: "bytes below the minimum", limits: RelayLimits{CircuitBytes: 1000}, want: "1000 bytes a relayed connection is below the minimum"},
		{name: "negative bytes", limits: RelayLimits{CircuitBytes: -1}, want: "below the minimum"},
		{name: "negative circuits", limits: RelayLimits{CircuitsPerPeer: -1}, want: "-1 relayed connections a peer is out of range [1, 128]"},
		{name: "too many circuits", limits: RelayLimits{CircuitsPerPeer: 129}, want: "out of range [1, 128]"},
		{name: "too many reservations", limits: RelayLimits{Reservations: 1000}, want: "1000 reservations is out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkNewHost(t, Config{Key: key, ListenAddrs: loopbackTCP(t), RelayService: true, RelayLimits: tc.limits}, tc.want)
		})
	}
	l := mustDefaults(t, RelayLimits{CircuitsPerPeer: 3})
	if rc := relayResources(l); rc.MaxCircuits != 3 || rc.MaxReservations != DefaultRelayReservations || rc.Limit != nil {
		t.Errorf("relay resources %+v, want 3 circuits a peer, %d reservations, no libp2p data limit", rc, DefaultRelayReservations)
	}
	if l.CircuitBytes != DefaultRelayCircuitBytes {
		t.Errorf("default bytes a relayed connection = %d, want %d", l.CircuitBytes, DefaultRelayCircuitBytes)
	}
}

// echoThrough sends n bytes from h to id on echoProto over h's relayed
// connection to id (hole punching may have made a direct one too) and
// reads them back, returning how many came back and the read's error.
func echoThrough(t *testing.T, h *Host, id peer.ID, n int) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var relayed network.Conn
	for _, c := range h.LibP2P().Network().ConnsToPeer(id) {
		if isCircuit(c.RemoteMultiaddr()) {
			relayed = c
		}
	}
	if relayed == nil {
		t.Fatal("no relayed connection")
	}
	s, err := relayed.NewStream(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Reset()
	if err := msmux.SelectProtoOrFail(echoProto, s); err != nil {
		return 0, err
	}
	msg := bytes.Repeat([]byte{'r'}, n)
	go func() {
		s.Write(msg)
		s.CloseWrite()
	}()
	s.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(s)
	return len(got), err
}

// TestRelayPerPeerLimits: a peer may have only CircuitsPerPeer relayed
// connections open through the relay at once; a relayed connection carries
// traffic up to the relay's byte limit, and is reset past it (the peers
// connect again, and a session's links resend what was lost).
func TestRelayPerPeerLimits(t *testing.T) {
	kRelay, idRelay := newKey(t)
	kPub, idPub := newKey(t)
	kNAT1, idNAT1 := newKey(t)
	kNAT2, idNAT2 := newKey(t)
	rec := &recordingHandler{}
	relay, err := NewHost(Config{Key: kRelay, RelayService: true, ListenAddrs: loopbackTCP(t), Logger: slog.New(rec),
		RelayLimits: RelayLimits{CircuitBytes: MinRelayCircuitBytes, CircuitsPerPeer: 1},
		Peers:       []Peer{{Name: "pub", ID: idPub}, {Name: "nat1", ID: idNAT1}, {Name: "nat2", ID: idNAT2}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close() })
	relayAddrs := relay.Addrs()
	var nats []*Host
	for _, n := range []struct {
		name string
		key  Config
	}{{"nat1", Config{Key: kNAT1, RelayVia: idRelay}}, {"nat2", Config{Key: kNAT2, RelayVia: idRelay}}} {
		h := newRelayHost(t, n.name, n.key, []Peer{
			{Name: "relay", ID: idRelay, Addrs: relayAddrs}, {Name: "pub", ID: idPub, Relay: idRelay},
		})
		echo(h)
		nats = append(nats, h)
	}
	for _, h := range append([]*Host{relay}, nats...) {
		h.Start(t.Context())
	}
	waitFor(t, "both reservations", func() bool { return nats[0].Connected(idRelay) && nats[1].Connected(idRelay) })
	pub := newRelayHost(t, "pub", Config{Key: kPub}, []Peer{
		{Name: "relay", ID: idRelay, Addrs: relayAddrs}, {Name: "nat1", ID: idNAT1, Relay: idRelay},
		{Name: "nat2", ID: idNAT2, Relay: idRelay},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// pub is not started: the test dials.
	waitFor(t, "pub to connect to nat1 through the relay", func() bool {
		pub.Redial(ctx, idNAT1)
		return pub.ConnKind(idNAT1) != ""
	})

	// One relayed connection a peer: pub, which holds one to nat1, gets
	// none to nat2.
	if err := pub.Redial(ctx, idNAT2); err == nil {
		t.Error("pub got a second relayed connection through a relay that allows one a peer")
	} else if !strings.Contains(err.Error(), "RESOURCE_LIMIT_EXCEEDED") {
		t.Errorf("second relayed connection: %v, want the relay's RESOURCE_LIMIT_EXCEEDED", err)
	}

	// 256 KiB each way: within the 1 MiB limit.
	n, err := echoThrough(t, pub, idNAT1, 256<<10)
	if n != 256<<10 || err != nil {
		t.Fatalf("echo of 256 KiB through the relay: %d bytes back, err %v", n, err)
	}
	// 1 MiB each way: past the limit, the relay resets the connection.
	n, err = echoThrough(t, pub, idNAT1, 1<<20)
	if n == 1<<20 && err == nil {
		t.Fatal("1 MiB each way went through a relayed connection limited to 1 MiB")
	}
	t.Logf("past the limit: %d bytes back, err %v", n, err)
	waitFor(t, "the relay to log the reset", func() bool { return rec.count(slog.LevelWarn, "the relay reset a relayed connection") == 1 })
}
