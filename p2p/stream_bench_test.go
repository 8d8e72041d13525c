package p2p

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// benchPair returns two connected hosts speaking TCP on loopback.
func benchPair(b *testing.B) (*Host, *Host) {
	tn := newTestNet(b, 2, nil)
	tn.connectAll(b)
	return tn.hosts[0], tn.hosts[1]
}

// BenchmarkRequestResponse measures one 64-byte request and a 64-byte
// response over Messengers: the responder's handler answers on its own
// outbound stream, and the requester waits for the answer on a channel.
func BenchmarkRequestResponse(b *testing.B) {
	ha, hb := benchPair(b)
	var mb *Messenger
	mb = NewMessenger(hb, testProto, func(from peer.ID, frame []byte) {
		if err := mb.Send(context.Background(), from, frame); err != nil {
			b.Error(err)
		}
	}, MessengerOptions{})
	replies := make(chan []byte, 1)
	ma := NewMessenger(ha, testProto, func(_ peer.ID, frame []byte) { replies <- frame }, MessengerOptions{})
	b.Cleanup(func() { ma.Close(); mb.Close() })
	req := bytes.Repeat([]byte{'q'}, 64)
	ctx := context.Background()
	// Warm up: open both streams.
	if err := ma.Send(ctx, hb.ID(), req); err != nil {
		b.Fatal(err)
	}
	<-replies
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ma.Send(ctx, hb.ID(), req); err != nil {
			b.Fatal(err)
		}
		<-replies
	}
}

// BenchmarkRawStreamRequestResponse is the baseline for
// BenchmarkRequestResponse: the same exchange on one raw libp2p stream with a
// one-byte length prefix, no deadlines and no extra goroutines.
func BenchmarkRawStreamRequestResponse(b *testing.B) {
	ha, hb := benchPair(b)
	hb.LibP2P().SetStreamHandler(testProto, func(s network.Stream) {
		defer s.Close()
		r := bufio.NewReader(s)
		buf := make([]byte, 255)
		for {
			n, err := r.ReadByte()
			if err != nil {
				return
			}
			if _, err := io.ReadFull(r, buf[:n]); err != nil {
				return
			}
			out := append([]byte{n}, buf[:n]...)
			if _, err := s.Write(out); err != nil {
				return
			}
		}
	})
	s, err := ha.LibP2P().NewStream(context.Background(), hb.ID(), testProto)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Reset() })
	req := append([]byte{64}, bytes.Repeat([]byte{'q'}, 64)...)
	r := bufio.NewReader(s)
	resp := make([]byte, 65)
	roundTrip := func() {
		if _, err := s.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, resp); err != nil {
			b.Fatal(err)
		}
	}
	roundTrip()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		roundTrip()
	}
}

// BenchmarkOneWay measures frames of 64 bytes sent one way as fast as
// Send takes them, until the receiver has them all: the link's numbering,
// copies kept until acknowledged and acknowledgements are on this path.
func BenchmarkOneWay(b *testing.B) {
	ha, hb := benchPair(b)
	var got atomic.Int64
	done := make(chan struct{}, 1)
	var want atomic.Int64
	mb := NewMessenger(hb, testProto, func(peer.ID, []byte) {
		if got.Add(1) == want.Load() {
			done <- struct{}{}
		}
	}, MessengerOptions{BorrowedFrames: true})
	ma := NewMessenger(ha, testProto, func(peer.ID, []byte) {}, MessengerOptions{})
	b.Cleanup(func() { ma.Close(); mb.Close() })
	frame := bytes.Repeat([]byte{'f'}, 64)
	ctx := context.Background()
	want.Store(1)
	if err := ma.Send(ctx, hb.ID(), frame); err != nil {
		b.Fatal(err)
	}
	<-done
	got.Store(0)
	want.Store(int64(b.N))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	for range b.N {
		if err := ma.Send(ctx, hb.ID(), frame); err != nil {
			b.Fatal(err)
		}
	}
	<-done
}
