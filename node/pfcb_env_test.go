package node

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// TestPFCBOnReplayedProcurements runs P-FCB across three agent daemons
// whose procurements are answered by a replay file of realized qualities
// (one row a round, one column a producer) instead of true qualities: the
// session completes, every agent stores its revenue and no regret, and the
// result says no agent knows its regret.
func TestPFCBOnReplayedProcurements(t *testing.T) {
	const n, m, rounds = 3, 5, 2000
	in, err := pfcb.NewInstance("uniform", n, m, 0.4, 7)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var csv strings.Builder
	csv.WriteString("# realized quality of each producer's units, one row a round\n")
	for range rounds {
		for i := range m {
			if i > 0 {
				csv.WriteByte(',')
			}
			fmt.Fprintf(&csv, "%.3f", in.Qualities[i]*(0.8+0.4*r.Float64())/1.2)
		}
		csv.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "qualities.csv")
	if err := os.WriteFile(file, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := startNetwork(t, n, func(i int, cfg *config.Config) {
		cfg.Policy["pfcb"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		cfg.LocalData["pfcb"] = map[string]any{"agent": &pfcb.AgentLocal{Costs: in.Costs[i], Capacities: in.Capacities[i], Rate: 50000}}
		if cfg.Environments == nil {
			cfg.Environments = map[string]map[string]environment.Config{}
		}
		cfg.Environments["pfcb"] = map[string]environment.Config{"agent": {Source: environment.SourceReplay,
			Replay: environment.ReplayConfig{Label: "local.pfcb.agent", File: file, Order: environment.OrderSequential}}}
	})
	spec := fmt.Sprintf("protocol = \"pfcb\"\n[roles]\nagent = [\"node1\", \"node2\", \"node3\"]\n[params]\nalgorithm = \"pfcb\"\nrounds = %d\n", rounds)
	session, res := completedSession[pfcb.Result](t, nodes[0], spec, 60*time.Second)
	if len(res.RegretUnknown) != n || res.RegretPerAgent != 0 || len(res.Curve) != 0 || len(res.Revenues) != n {
		t.Fatalf("result %+v, want every agent without regret, with its revenue", res)
	}
	for _, tn := range nodes {
		rec, err := tn.store.Get(session.ID)
		if err != nil {
			t.Fatal(err)
		}
		for party, raw := range rec.Local {
			var local pfcb.AgentOutcome
			if err := json.Unmarshal(raw, &local); err != nil {
				t.Fatal(err)
			}
			if local.Rounds != rounds || local.Regret != nil || local.Revenue == 0 || len(local.Procured) != m {
				t.Errorf("%s stored %s: %+v, want its revenue, procurement totals and no regret", tn.cfg.Node.Name, party, local)
			}
		}
	}
}
