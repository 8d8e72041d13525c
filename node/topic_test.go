package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

// The replay log keeps the newest frames within its bounds, and a
// message without a number (from a daemon that does not number them) is
// always handed over.
func TestTopicReplayLog(t *testing.T) {
	var r topicReplay
	var w topicWindows
	start := time.Unix(1000, 0)
	for i := range topicLogSize + 10 {
		r.published([]byte{byte(i)}, start.Add(time.Duration(i)*time.Millisecond))
	}
	if len(r.log) != topicLogSize || r.log[0].frame[0] != byte(10) {
		t.Fatalf("log of %d frames from %d, want %d from 10", len(r.log), r.log[0].frame[0], topicLogSize)
	}
	if got := r.since(start.Add(time.Duration(topicLogSize+7) * time.Millisecond)); len(got) != 2 {
		t.Errorf("since: %d frames, want the last 2", len(got))
	}
	big := make([]byte, topicLogBytes/2+1)
	r.published(big, start.Add(time.Hour))
	r.published(big, start.Add(time.Hour))
	if len(r.log) != 1 || r.bytes != len(big) {
		t.Errorf("after two frames of half the byte bound: %d frames, %d bytes; want the last alone", len(r.log), r.bytes)
	}
	p := protocol.Party{Role: "agent", Index: 1}
	fresh := func(seq uint64) bool {
		ok, err := w.fresh(p, seq)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for range 2 {
		if !fresh(0) {
			t.Error("an unnumbered message was taken for a copy")
		}
	}
	if !fresh(1) || fresh(1) || r.nextSeq(p) != 1 || r.nextSeq(p) != 2 {
		t.Error("numbering or deduplication is off")
	}
}

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
