package p2p

import (
	"bytes"
	"crypto/rand"
	"io"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	goyamux "github.com/libp2p/go-yamux/v5"
)

func TestYamuxTransport(t *testing.T) {
	got := NewYamuxTransport()
	tests := []struct {
		name      string
		got, want any
	}{
		{"round-trip measurement", got.MeasureRTTInterval, 5 * time.Minute},
		{"keep-alive on", got.EnableKeepAlive, true},
		{"keep-alive interval", got.KeepAliveInterval, 30 * time.Second},
		{"largest stream window (go-libp2p's)", got.MaxStreamWindowSize, yamux.DefaultTransport.MaxStreamWindowSize},
		{"first stream window", got.InitialStreamWindowSize, uint32(yamuxInitialWindow)},
		{"go-libp2p's default left alone", yamux.DefaultTransport.MeasureRTTInterval, 30 * time.Second},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if got == yamux.DefaultTransport {
		t.Fatal("NewYamuxTransport returned go-libp2p's shared default, not a copy")
	}
	if err := goyamux.VerifyConfig(got.Config()); err != nil {
		t.Fatalf("yamux rejects the configuration: %v", err)
	}
}

// TestStreamTakesALargeMessageUnread writes a 3 MiB message into a fresh
// stream whose reader has not read yet: the write completes because every
// stream's window starts at yamuxInitialWindow. With yamux's own 256 KiB
// start the writer waits for the reader's window updates, a round trip
// each (on a long link the window stays too small to keep it busy: see
// yamuxInitialWindow), and here would wait until its deadline.
func TestStreamTakesALargeMessageUnread(t *testing.T) {
	const size = 3 << 20
	if size >= yamuxInitialWindow {
		t.Fatalf("the message (%d bytes) must fit the initial window (%d)", size, yamuxInitialWindow)
	}
	tn := newTestNet(t, 2, nil)
	tn.connectAll(t)
	const id = protocol.ID("/bandit-node/test/window/1")
	release := make(chan struct{})
	got := make(chan []byte, 1)
	tn.hosts[1].LibP2P().SetStreamHandler(id, func(s network.Stream) {
		defer s.Close()
		<-release // read nothing until the writer is done
		b, err := io.ReadAll(s)
		if err != nil {
			t.Errorf("reading: %v", err)
		}
		got <- b
	})
	msg := make([]byte, size)
	if _, err := rand.Read(msg); err != nil {
		t.Fatal(err)
	}
	s, err := tn.hosts[0].LibP2P().NewStream(t.Context(), tn.ids[1], id)
	if err != nil {
		t.Fatal(err)
	}
	// The deadline only ends a write that the window holds up.
	if err := s.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(msg); err != nil {
		close(release)
		t.Fatalf("writing %d bytes the reader has not read: %v (the stream's window is smaller than the message)", size, err)
	}
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	close(release)
	select {
	case b := <-got:
		if !bytes.Equal(b, msg) {
			t.Fatalf("the reader got %d bytes, not the %d written", len(b), size)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reader did not finish in 30 s")
	}
}
