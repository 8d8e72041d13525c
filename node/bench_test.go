package node

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/bench/pattern"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// BenchmarkSessionRoundTrip measures the whole session path between two
// daemons in this process — role → session goroutine → framed stream →
// libp2p (TCP, loopback) → the peer's session goroutine → role and back — with
// a ping session of b.N round trips per direction (both directions run at
// once). It reports the median round trip as median-µs/rtt.
func BenchmarkSessionRoundTrip(b *testing.B) {
	nodes := startNetwork(b, 2, func(i int, cfg *config.Config) { cfg.Log.Level = "warn" })
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

// BenchmarkSAMBAStep runs SAMBA (UCB, K = 10 data owners, 2048-bit Paillier)
// on 13 daemons in this process over libp2p, a session of b.N steps, and then
// the bare message pattern of as many steps on as many hosts in this process
// (bench/pattern): it reports both as ms/step and their ratio. The session's
// time includes its setup; use -benchtime 20000x or more.
func BenchmarkSAMBAStep(b *testing.B) {
	const k = 10
	means := make([]float64, k)
	for i := range means {
		means[i] = 0.6 - 0.03*float64(i)
	}
	nodes := startNetwork(b, k+3, func(i int, cfg *config.Config) {
		cfg.Log.Level = "warn"
		cfg.Policy["samba"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: means[i-3]}}
		}
	})
	owners := make([]string, k)
	for i := range owners {
		owners[i] = fmt.Sprintf("%q", fmt.Sprintf("node%d", i+4))
	}
	steps := max(b.N, 1000)
	spec := fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [%s]\n[params]\nalgorithm = \"ucb\"\nbudget = %d\n", strings.Join(owners, ", "), steps)
	b.ResetTimer()
	start := time.Now()
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		b.Fatal(err)
	}
	got := waitEnded(b, nodes[0], id, 30*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	if got.State != stateCompleted {
		b.Fatalf("session ended %s: %s", got.State, got.Reason)
	}
	bare, err := pattern.RunInProcess(b.Context(), pattern.Config{K: k, Steps: steps, Warmup: pattern.DefaultWarmup})
	if err != nil {
		b.Fatal(err)
	}
	sambaMs := 1000 * elapsed.Seconds() / float64(steps)
	b.ReportMetric(sambaMs, "samba-ms/step")
	b.ReportMetric(bare.MsPerStep, "bare-ms/step")
	b.ReportMetric(sambaMs/bare.MsPerStep, "ratio")
}
