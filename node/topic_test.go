package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

// TestForgedTopicNumbersAbortTheSession: a participant that numbers a
// topic message past the de-duplication window — as one would to make the
// receiver's set of numbers grow — gets the session aborted, on every
// participant, with a reason that names the organization, the party and
// the class of failure, and nothing of the message.
func TestForgedTopicNumbersAbortTheSession(t *testing.T) {
	nodes := startNetwork(t, 4, func(i int, cfg *config.Config) {
		cfg.Log.Level = "warn"
		cfg.Policy["bai"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i > 0 {
			// Slow agents: the session is still running when the forged
			// frame comes.
			cfg.LocalData["bai"] = map[string]any{"agent": &bai.AgentLocal{
				Env: bai.Environment{Reward: bai.RewardBernoulli, Arms: problem1}, Rate: 50}}
		}
	})
	spec := "protocol = \"bai\"\n[roles]\ncoordinator = \"node1\"\nagent = [\"node2\", \"node3\", \"node4\"]\n[params]\nalgorithm = \"dp_mase\"\narms = 10\ndelta = 0.25\nbeta = 0.5\nepsilon = 0.5\n"
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the session to run", func() bool {
		rec, err := nodes[0].sessionRecord(id)
		return err == nil && rec.Session.State == stateRunning
	})
	overflows := func() float64 { return counterValue(t, nodes[0].metrics.Errors.WithLabelValues("overflow")) }
	before := overflows()
	// node2 plays agent[0]; its frame comes on the family's role stream,
	// the way a replayed topic message does.
	const secret = "SECRET-PAYLOAD-7731"
	forged := marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "agent", FromIndex: 0, Body: []byte(secret), TopicSeq: 1 << 40})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := nodes[1].roleMessenger(t, "bai").Send(ctx, nodes[0].ID(), forged); err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		got := waitEnded(t, tn, id, 30*time.Second)
		if got.State != stateAborted || !strings.Contains(got.Reason, "agent[0] (node2): its topic messages ran more than 4096 ahead") ||
			!strings.Contains(got.Reason, "de-duplication window") {
			t.Errorf("%s: session %s: %q; want aborted naming agent[0] (node2) and the window", tn.cfg.Node.Name, got.State, got.Reason)
		}
		if strings.Contains(got.Reason, secret) || strings.Contains(got.Reason, "1099511627776") {
			t.Errorf("%s: the reason carries the forged message: %q", tn.cfg.Node.Name, got.Reason)
		}
	}
	if overflows() != before+1 {
		t.Errorf("bandit_errors_total{kind=\"overflow\"} went from %v to %v, want one more", before, overflows())
	}
}
