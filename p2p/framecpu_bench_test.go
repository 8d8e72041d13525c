//go:build unix

package p2p

import (
	"bufio"
	"bytes"
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// frameCPUSize is a SAMBA score frame's size (bench/pattern's default), the
// frame the controller receives K of a step.
const frameCPUSize = 91

// processCPU returns the CPU time (user and system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("reading the process's CPU time: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// echoer is one way of moving a frame to a peer that sends it back: the
// bench's three ways share the hosts and the frame.
type echoer interface {
	// roundTrip sends frame and waits for its echo.
	roundTrip(tb testing.TB, frame []byte)
	close()
}

// rawEcho writes each frame, length prefix included, with one Write on a
// raw libp2p stream and reads it back with a bufio.Reader: the floor.
type rawEcho struct {
	s   network.Stream
	r   *bufio.Reader
	out []byte
}

func newRawEcho(tb testing.TB, ha, hb *Host, id protocol.ID) echoer {
	hb.LibP2P().SetStreamHandler(id, func(s network.Stream) {
		defer s.Close()
		r := bufio.NewReaderSize(s, streamBufferSize)
		out := make([]byte, 0, 2*frameCPUSize)
		for {
			frame, borrowed, err := BorrowFrame(r, 1<<10)
			if err != nil {
				return
			}
			out = appendFrame(out[:0], frame)
			if borrowed {
				r.Discard(len(frame))
			}
			if _, err := s.Write(out); err != nil {
				return
			}
		}
	})
	s, err := ha.LibP2P().NewStream(context.Background(), hb.ID(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return &rawEcho{s: s, r: bufio.NewReaderSize(s, streamBufferSize)}
}

func appendFrame(b, frame []byte) []byte {
	b = append(b, byte(len(frame))) // frames under 128 bytes: a one-byte uvarint
	return append(b, frame...)
}

func (e *rawEcho) roundTrip(tb testing.TB, frame []byte) {
	e.out = appendFrame(e.out[:0], frame)
	if _, err := e.s.Write(e.out); err != nil {
		tb.Fatal(err)
	}
	got, borrowed, err := BorrowFrame(e.r, 1<<10)
	if err != nil {
		tb.Fatal(err)
	}
	if borrowed {
		e.r.Discard(len(got))
	}
}

func (e *rawEcho) close() { e.s.Reset() }

// bareEcho is bench/pattern's way: WriteFrame into a bufio.Writer and a
// Flush per frame, BorrowFrame to read.
type bareEcho struct {
	s network.Stream
	r *bufio.Reader
	w *bufio.Writer
}

func newBareEcho(tb testing.TB, ha, hb *Host, id protocol.ID) echoer {
	hb.LibP2P().SetStreamHandler(id, func(s network.Stream) {
		defer s.Close()
		r := bufio.NewReaderSize(s, 16<<10)
		w := bufio.NewWriterSize(s, 16<<10)
		for {
			frame, borrowed, err := BorrowFrame(r, 1<<10)
			if err != nil {
				return
			}
			err = WriteFrame(w, frame, 1<<10)
			if borrowed {
				r.Discard(len(frame))
			}
			if err != nil || w.Flush() != nil {
				return
			}
		}
	})
	s, err := ha.LibP2P().NewStream(context.Background(), hb.ID(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return &bareEcho{s: s, r: bufio.NewReaderSize(s, 16<<10), w: bufio.NewWriterSize(s, 16<<10)}
}

func (e *bareEcho) roundTrip(tb testing.TB, frame []byte) {
	if err := WriteFrame(e.w, frame, 1<<10); err != nil {
		tb.Fatal(err)
	}
	if err := e.w.Flush(); err != nil {
		tb.Fatal(err)
	}
	got, borrowed, err := BorrowFrame(e.r, 1<<10)
	if err != nil {
		tb.Fatal(err)
	}
	if borrowed {
		e.r.Discard(len(got))
	}
}

func (e *bareEcho) close() { e.s.Reset() }

// messengerEcho is the daemon's frame path below the session: a Sender's
// Send (the link's numbering, the copy kept until acknowledged, the write
// deadline), the inbound stream's reader goroutine handing a borrowed
// frame to the handler, and the acknowledgements.
type messengerEcho struct {
	ma, mb  *Messenger
	sd      *Sender
	replies chan struct{}
}

func newMessengerEcho(tb testing.TB, ha, hb *Host, id protocol.ID) echoer {
	e := &messengerEcho{replies: make(chan struct{}, 1)}
	var back *Sender
	e.mb = NewMessenger(hb, id, func(_ peer.ID, frame []byte) {
		if err := back.Send(context.Background(), frame); err != nil {
			tb.Error(err)
		}
	}, MessengerOptions{BorrowedFrames: true})
	e.ma = NewMessenger(ha, id, func(peer.ID, []byte) { e.replies <- struct{}{} }, MessengerOptions{BorrowedFrames: true})
	var err error
	if back, err = e.mb.Sender(ha.ID()); err != nil {
		tb.Fatal(err)
	}
	if e.sd, err = e.ma.Sender(hb.ID()); err != nil {
		tb.Fatal(err)
	}
	return e
}

func (e *messengerEcho) roundTrip(tb testing.TB, frame []byte) {
	if err := e.sd.Send(context.Background(), frame); err != nil {
		tb.Fatal(err)
	}
	select {
	case <-e.replies:
	case <-time.After(time.Minute):
		tb.Fatal("no echo within a minute")
	}
}

func (e *messengerEcho) close() { e.ma.Close(); e.mb.Close() }

// BenchmarkFrameCPU sets the CPU time a frame costs on three paths against
// each other, in one run: a raw libp2p stream written once per frame (raw),
// bench/pattern's bufio write and flush per frame (bare, the message
// pattern SAMBA is compared with), and the daemon's Messenger (messenger).
// Each path carries b.N round trips of a 91-byte frame (a SAMBA score)
// between two hosts of this process on loopback TCP, one frame at a time as
// the controller's are; the paths take turns in slices of b.N/10 round
// trips, so that a change of the shared machine's speed falls on all three.
// At pace=0 the round trips follow each other at once; at pace=4ms each
// waits 4 ms after the last, as a stream of SAMBA's controller carries a
// frame each way per step at K = 100 on daemons (2–5 ms a step), so that
// what a frame costs when its stream has been idle in between — a
// reader's wake-up, the acknowledgement timer — is counted too (use
// -benchtime 2000x there). CPU is the process's (both hosts, getrusage),
// never wall time: it reports each path's CPU µs per frame (two frames a
// round trip) and the ratios bare/raw and messenger/raw.
func BenchmarkFrameCPU(b *testing.B) {
	for _, pace := range []time.Duration{0, 4 * time.Millisecond} {
		b.Run("pace="+pace.String(), func(b *testing.B) { benchFrameCPU(b, pace) })
	}
}

func benchFrameCPU(b *testing.B, pace time.Duration) {
	ha, hb := benchPair(b)
	frame := bytes.Repeat([]byte{'s'}, frameCPUSize)
	paths := []struct {
		name string
		make func(testing.TB, *Host, *Host, protocol.ID) echoer
	}{
		{"raw", newRawEcho},
		{"bare", newBareEcho},
		{"messenger", newMessengerEcho},
	}
	echoers := make([]echoer, len(paths))
	for i, p := range paths {
		echoers[i] = p.make(b, ha, hb, protocol.ID("/bandit/bench-"+p.name+"/1.0.0"))
		defer echoers[i].close()
		for range 100 { // open the streams, warm the buffers
			echoers[i].roundTrip(b, frame)
		}
	}
	cpu := make([]time.Duration, len(paths))
	const slices = 10
	b.ReportAllocs()
	b.ResetTimer()
	for s := range slices {
		n := b.N / slices
		if s < b.N%slices {
			n++
		}
		for i, e := range echoers {
			c0 := processCPU(b)
			for range n {
				if pace > 0 {
					time.Sleep(pace)
				}
				e.roundTrip(b, frame)
			}
			cpu[i] += processCPU(b) - c0
		}
	}
	b.StopTimer()
	perFrame := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(2*b.N) }
	for i, p := range paths {
		b.ReportMetric(perFrame(cpu[i]), p.name+"-cpu-µs/frame")
	}
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "bare/raw")
	b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "messenger/raw")
}
