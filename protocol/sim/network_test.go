package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// BenchmarkMemNetwork measures the simulator's event queue: one message sent
// and one delivered per op, with SAMBA's fan-in of K messages in flight
// (K data owners each sending the controller a 64-byte score), as ns per
// message.
func BenchmarkMemNetwork(b *testing.B) {
	for _, k := range []int{10, 100} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			parties := []protocol.Party{{Role: "controller"}}
			for i := range k {
				parties = append(parties, protocol.Party{Role: "data_owner", Index: i})
			}
			n := NewNetwork(parties, DefaultLinkLatency, time.Unix(0, 0))
			ctx := context.Background()
			body := make([]byte, 64)
			to := protocol.Party{Role: "controller"}
			for i := range k {
				if err := n.Endpoint(parties[1+i]).Send(ctx, protocol.Message{To: to, Body: body}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				m, ok := n.Next()
				if !ok {
					b.Fatal("queue empty")
				}
				if err := n.Endpoint(parties[1+i%k]).Send(ctx, protocol.Message{To: to, Body: m.Body}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMemNetworkOrderAgainstHeap checks the ring buffer behind the benchmark
// against the order it replaced — earliest delivery time first, then the
// order sent — over random sends, deliveries and advances of virtual time
// that make the ring wrap around and grow.
func TestMemNetworkOrderAgainstHeap(t *testing.T) {
	type want struct {
		at  time.Time
		seq int
	}
	for _, latency := range []time.Duration{0, DefaultLinkLatency} {
		rng := rand.New(rand.NewPCG(uint64(latency), 7))
		parties := []protocol.Party{{Role: "b"}, {Role: "a", Index: 1}, {Role: "a"}, {Role: "b", Index: 2}}
		start := time.Unix(100, 0)
		n := NewNetwork(parties, latency, start)
		var queue []want // the reference: sorted by (at, seq)
		now := start
		for seq := 0; seq < 5000; {
			switch op := rng.IntN(10); {
			case op < 5:
				from, to := parties[rng.IntN(len(parties))], parties[rng.IntN(len(parties))]
				body := []byte{byte(seq), byte(seq >> 8), byte(seq >> 16)}
				if err := n.Endpoint(from).Send(context.Background(), protocol.Message{To: to, Body: body}); err != nil {
					t.Fatal(err)
				}
				queue = append(queue, want{now.Add(latency), seq})
				seq++
			case op < 9:
				m, ok := n.Next()
				if ok != (len(queue) > 0) {
					t.Fatalf("Next: ok = %v with %d queued", ok, len(queue))
				}
				if !ok {
					continue
				}
				best := 0
				for i, w := range queue {
					if w.at.Before(queue[best].at) || (w.at.Equal(queue[best].at) && w.seq < queue[best].seq) {
						best = i
					}
				}
				w := queue[best]
				queue = append(queue[:best], queue[best+1:]...)
				if got := int(m.Body[0]) | int(m.Body[1])<<8 | int(m.Body[2])<<16; got != w.seq {
					t.Fatalf("delivered message %d, want %d", got, w.seq)
				}
				if w.at.After(now) {
					now = w.at
				}
				if !n.Now().Equal(now) {
					t.Fatalf("Now() = %v, want %v", n.Now(), now)
				}
			default:
				to := now.Add(time.Duration(rng.IntN(3)-1) * 50 * time.Microsecond)
				n.Advance(to)
				if to.After(now) {
					now = to
				}
			}
			at, ok := n.NextAt()
			if ok != (len(queue) > 0) {
				t.Fatalf("NextAt: ok = %v with %d queued", ok, len(queue))
			}
			for _, w := range queue {
				if w.at.Before(at) {
					t.Fatalf("NextAt = %v, but a message is due at %v", at, w.at)
				}
			}
		}
	}
	if n := NewNetwork([]protocol.Party{{Role: "a"}}, 0, time.Time{}); n.Endpoint(protocol.Party{Role: "a", Index: 1}) != nil || n.Endpoint(protocol.Party{Role: "c"}) != nil || n.Endpoint(protocol.Party{Role: "a", Index: -1}) != nil {
		t.Error("Endpoint found a party that is not on the network")
	}
}
