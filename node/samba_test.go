package node

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestSAMBAOnTheNetworkTheorem2 runs SAMBA across six daemons — data
// customer, controller, comp and three data owners, each owner's arm in its
// own config — with every role's randomness replaced (test hook) by the
// seeded streams a simulation would use, and checks Theorem 2 over libp2p:
// the data customer's cumulative reward and every arm's pulls equal the
// standard algorithm's from the same seed.
func TestSAMBAOnTheNetworkTheorem2(t *testing.T) {
	means := []float64{0.6, 0.45, 0.3}
	const seed = 11
	nodes := startNetwork(t, 6, func(i int, cfg *Config) {
		cfg.Policy["samba"] = PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: means[i-3]}}
		}
	})
	for _, tn := range nodes {
		tn.roleRand = func(p protocol.Party) io.Reader { return protocol.SeededRand(seed, p) }
	}
	// roleFrames is how many role messages the six daemons' metrics
	// counted, out and in.
	roleFrames := func() (out, in float64) {
		for _, tn := range nodes {
			got := trafficSeries(t, tn.metrics.registry)
			out += got["bandit_messages_total out role"]
			in += got["bandit_messages_total in role"]
		}
		return out, in
	}
	for _, alg := range []string{"ucb", "softmax", "pursuit"} {
		t.Run(alg, func(t *testing.T) {
			out0, in0 := roleFrames()
			spec := fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nalgorithm = %q\nbudget = 400\npaillier_bits = 512\n", alg)
			id, err := nodes[0].StartSession([]byte(spec))
			if err != nil {
				t.Fatal(err)
			}
			got := waitEnded(t, nodes[0], id, 60*time.Second)
			if got.State != stateCompleted {
				t.Fatalf("session ended %s: %s", got.State, got.Reason)
			}
			rec, _ := nodes[0].sessionRecord(id)
			var res samba.Result
			if err := json.Unmarshal(rec.Result, &res); err != nil {
				t.Fatal(err)
			}
			p, _ := samba.Family{}.ParseParams(map[string]any{"algorithm": alg, "budget": int64(400), "paillier_bits": int64(512)})
			wantReward, seq, err := samba.Reference(p.(samba.Params), means, seed)
			if err != nil {
				t.Fatal(err)
			}
			// The steps' wall time, on the controller's clock: inside the
			// session's, and per step as said.
			if got.Finished == nil {
				t.Errorf("the session record has no end: %+v", got)
			} else if whole := got.Finished.Sub(got.Created).Seconds(); res.StepsSeconds <= 0 || res.StepsSeconds > whole {
				t.Errorf("steps took %v s of a session of %v s", res.StepsSeconds, whole)
			}
			if want := res.StepsSeconds * 1e3 / (400 - 3); res.MsPerStep != want {
				t.Errorf("%v ms per step, want %v (steps_seconds / (N − K))", res.MsPerStep, want)
			}
			if res.CumulativeReward != wantReward {
				t.Errorf("the data customer got %d over libp2p, the standard algorithm %d", res.CumulativeReward, wantReward)
			}
			counts := make([]int64, len(means))
			for _, i := range seq {
				counts[i]++
			}
			for i, tn := range nodes[3:] {
				r, err := tn.store.get(id)
				if err != nil {
					t.Fatal(err)
				}
				var out samba.OwnerOutcome
				for _, raw := range r.Local {
					json.Unmarshal(raw, &out)
				}
				if out.Pulls != counts[i] {
					t.Errorf("data owner %d was pulled %d times, the standard algorithm pulled its arm %d times", i, out.Pulls, counts[i])
				}
			}
			if want := int64((400-3)*(2*3+2)*map[string]int{"ucb": 1, "softmax": 1, "pursuit": 2}[alg]) + 3 + 1 + 3 + 3 + 3 + 1; res.Messages != want {
				t.Errorf("%d messages, want %d (2K+2 per step and iteration)", res.Messages, want)
			}
			// Every message went from one daemon to another as a role
			// frame, and each daemon's metrics counted it out and in.
			out, in := roleFrames()
			if out-out0 != float64(res.Messages) || in-in0 != float64(res.Messages) {
				t.Errorf("the daemons' metrics counted %v role messages out and %v in, the roles sent %d", out-out0, in-in0, res.Messages)
			}
		})
	}
}
