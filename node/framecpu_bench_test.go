//go:build unix

package node

import (
	"bufio"
	"bytes"
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// processCPU returns the CPU time (user and system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("reading the process's CPU time: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawEchoProto is the raw stream BenchmarkSessionFrameCPU compares with.
const rawEchoProto = "/bandit/bench-raw-echo/1.0.0"

// rawEchoes runs n round trips of a frame each way at once between a and b
// on raw libp2p streams of the daemons' own hosts — each frame one Write
// with its one-byte length, read back with a bufio.Reader — the way a ping
// session runs its two directions.
func rawEchoes(tb testing.TB, a, b *testNode, n int) {
	serve := func(s network.Stream) {
		defer s.Close()
		r := bufio.NewReaderSize(s, 4<<10)
		out := make([]byte, 0, 128)
		for {
			frame, borrowed, err := p2p.BorrowFrame(r, 127)
			if err != nil {
				return
			}
			out = append(append(out[:0], byte(len(frame))), frame...)
			if borrowed {
				r.Discard(len(frame))
			}
			if _, err := s.Write(out); err != nil {
				return
			}
		}
	}
	a.host.LibP2P().SetStreamHandler(rawEchoProto, serve)
	b.host.LibP2P().SetStreamHandler(rawEchoProto, serve)
	// frame: about a ping frame's size (its head and a 16-byte body).
	frame := append([]byte{90}, bytes.Repeat([]byte{'p'}, 90)...)
	var wg sync.WaitGroup
	for _, d := range [][2]*testNode{{a, b}, {b, a}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s, err := d[0].host.LibP2P().NewStream(ctx, peer.ID(d[1].host.ID()), rawEchoProto)
		cancel()
		if err != nil {
			tb.Fatal(err)
		}
		wg.Go(func() {
			defer s.Close()
			s.SetDeadline(time.Now().Add(10 * time.Minute))
			r := bufio.NewReaderSize(s, 4<<10)
			for range n {
				if _, err := s.Write(frame); err != nil {
					tb.Error(err)
					return
				}
				got, borrowed, err := p2p.BorrowFrame(r, 127)
				if err != nil {
					tb.Error(err)
					return
				}
				if borrowed {
					r.Discard(len(got))
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkSessionFrameCPU sets the CPU time a role frame costs on the
// whole session path — the stream's reader, the frame's head, the session
// stepping the role in place, the transport, the Messenger's Send — against
// a raw libp2p stream's write and read of a frame of the same size, in one
// run between two daemons of this process (loopback TCP). The session is a
// ping session of b.N round trips each way at once (4·b.N role frames); the
// raw side runs as many round trips each way, half before the session and
// half after it, so that a steady drift of the shared machine's speed
// cancels. CPU is the process's (getrusage), never wall time; the
// session's includes its proposal and its records, a constant that
// -benchtime 20000x makes small. It reports both in CPU µs per frame and
// their ratio.
func BenchmarkSessionFrameCPU(b *testing.B) {
	nodes := startNetwork(b, 2, func(i int, cfg *config.Config) { cfg.Log.Level = "warn" })
	rawEchoes(b, nodes[0], nodes[1], 200) // open the streams, warm up
	n := max(b.N, 2)
	b.ResetTimer()
	c0 := processCPU(b)
	rawEchoes(b, nodes[0], nodes[1], n/2)
	c1 := processCPU(b)
	id, err := nodes[0].StartSession(pingSpec(n, "node1", "node2"))
	if err != nil {
		b.Fatal(err)
	}
	got := waitEnded(b, nodes[0], id, 10*time.Minute)
	c2 := processCPU(b)
	rawEchoes(b, nodes[0], nodes[1], n-n/2)
	c3 := processCPU(b)
	b.StopTimer()
	if got.State != stateCompleted {
		b.Fatalf("session ended %s: %s", got.State, got.Reason)
	}
	frames := float64(4 * n)
	raw := float64((c1 - c0 + c3 - c2).Microseconds()) / frames
	session := float64((c2 - c1).Microseconds()) / frames
	b.ReportMetric(raw, "raw-cpu-µs/frame")
	b.ReportMetric(session, "session-cpu-µs/frame")
	b.ReportMetric(session/raw, "session/raw")
}
