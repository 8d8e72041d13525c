package node

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol/ping"
)

// BenchmarkSessionRoundTrip measures the whole session path between two
// daemons in this process — role → session goroutine → framed stream →
// libp2p (TCP, loopback) → the peer's session goroutine → role and back — with
// a ping session of b.N round trips per direction (both directions run at
// once). It reports the median round trip as median-µs/rtt.
func BenchmarkSessionRoundTrip(b *testing.B) {
	nodes := startNetwork(b, 2, func(i int, cfg *Config) { cfg.Log.Level = "warn" })
	b.ResetTimer()
	id, err := nodes[0].StartSession(pingSpec(max(b.N, 1), "node1", "node2"))
	if err != nil {
		b.Fatal(err)
	}
	got := waitEnded(b, nodes[0], id, 10*time.Minute)
	b.StopTimer()
	if got.State != stateCompleted {
		b.Fatalf("session ended %s: %s", got.State, got.Reason)
	}
	rec, _ := nodes[0].sessionRecord(id)
	var m ping.Matrix
	if err := json.Unmarshal(rec.Result, &m); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(m.MedianMicros[0][1], "median-µs/rtt")
	b.ReportMetric(m.P99Micros[0][1], "p99-µs/rtt")
}
