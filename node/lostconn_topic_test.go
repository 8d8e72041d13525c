package node

import (
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// TestBAISurvivesLostConnections runs BAI, whose coordinator and agents
// also talk on the session's gossipsub topic, while the coordinator's
// connections to the agents are closed one after another, every 50 ms, for
// the whole session.
func TestBAISurvivesLostConnections(t *testing.T) {
	t.Parallel()
	nodes := startNetwork(t, 5, func(i int, cfg *config.Config) {
		cfg.Log.Level = "warn"
		cfg.Policy["bai"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i > 0 {
			cfg.LocalData["bai"] = map[string]any{"agent": &bai.AgentLocal{
				Env: bai.Environment{Reward: bai.RewardBernoulli, Arms: problem1}, Rate: 4000}}
		}
	})
	spec := "protocol = \"bai\"\n[roles]\ncoordinator = \"node1\"\nagent = [\"node2\", \"node3\", \"node4\", \"node5\"]\n[params]\nalgorithm = \"dp_mase\"\narms = 10\ndelta = 0.25\nbeta = 0.5\nepsilon = 0.5\n"
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	// The coordinator's connection to each agent in turn, from either end.
	stop := closeConnectionsEvery(nodes, [][2]int{{0, 1}, {2, 0}, {0, 3}, {4, 0}}, 50*time.Millisecond)
	got := waitEnded(t, nodes[0], id, 120*time.Second)
	closes := stop()
	if got.State != stateCompleted {
		t.Fatalf("session ended %s after %d closed connections: %s", got.State, closes, got.Reason)
	}
	t.Logf("completed through %d closed connections (%+v)", closes, got.Progress)
}

// TestPFCBSurvivesLostConnections runs P-FCB, whose agents share only on
// the session's topic, while their connections are closed every 30 ms,
// from either end, for the whole session. Gossipsub resends nothing
// itself: a share published while a connection is down is replayed to
// the peer when it connects again (topic.go), and deduplicated.
func TestPFCBSurvivesLostConnections(t *testing.T) {
	t.Parallel()
	const n, m = 3, 5
	in, err := pfcb.NewInstance("uniform", n, m, 0.4, 7)
	if err != nil {
		t.Fatal(err)
	}
	nodes := startNetwork(t, n, func(i int, cfg *config.Config) {
		cfg.Log.Level = "warn"
		cfg.Policy["pfcb"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		cfg.LocalData["pfcb"] = map[string]any{"agent": &pfcb.AgentLocal{
			Qualities: in.Qualities, Costs: in.Costs[i], Capacities: in.Capacities[i], Rate: 1500}}
	})
	spec := "protocol = \"pfcb\"\n[roles]\nagent = [\"node1\", \"node2\", \"node3\"]\n[params]\nalgorithm = \"pfcb\"\nrounds = 5000\n"
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	stop := closeConnectionsEvery(nodes, [][2]int{{0, 1}, {2, 0}, {1, 2}, {0, 2}, {1, 0}, {2, 1}}, 30*time.Millisecond)
	got := waitEnded(t, nodes[0], id, 120*time.Second)
	closes := stop()
	if got.State != stateCompleted {
		t.Fatalf("session ended %s after %d closed connections: %s", got.State, closes, got.Reason)
	}
	t.Logf("completed through %d closed connections", closes)
}
