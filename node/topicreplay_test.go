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

// The de-duplication window of a party's topic messages: each number is
// handed over once, in any order, within topicSeqWindow of the first
// number not received; a number beyond is refused, as over, and nothing is
// taken after it.
func TestSequenceWindow(t *testing.T) {
	const w = topicSeqWindow
	if w%64 != 0 {
		t.Fatalf("topicSeqWindow = %d is not a multiple of 64, the bitmap's words", w)
	}
	tests := []struct {
		name  string
		add   []uint64
		fresh []bool // add's answers
		over  int    // the index in add of the first over; -1 for none
		upto  uint64
		count int // numbers held above upto
	}{
		{name: "in order", add: []uint64{1, 2, 3}, fresh: []bool{true, true, true}, over: -1, upto: 3},
		{name: "repeats", add: []uint64{1, 1, 2, 1, 2}, fresh: []bool{true, false, true, false, false}, over: -1, upto: 2},
		{name: "a gap filled", add: []uint64{1, 3, 4, 3, 2, 4}, fresh: []bool{true, true, true, false, true, false}, over: -1, upto: 4},
		{name: "from above", add: []uint64{5, 4, 3, 2, 1}, fresh: []bool{true, true, true, true, true}, over: -1, upto: 5},
		{name: "a gap left", add: []uint64{2, 3}, fresh: []bool{true, true}, over: -1, upto: 0, count: 2},
		{name: "the window's last number", add: []uint64{w, w}, fresh: []bool{true, false}, over: -1, upto: 0, count: 1},
		{name: "one past the window", add: []uint64{w + 1}, fresh: []bool{false}, over: 0},
		{name: "past the window after a gap", add: []uint64{1, 3, w + 2}, fresh: []bool{true, true, false}, over: 2, upto: 1, count: 1},
		{name: "nothing taken after", add: []uint64{1, w + 5, 2, 3}, fresh: []bool{true, false, false, false}, over: 1, upto: 1},
		{name: "the window slides with the gap", add: []uint64{2, w, 1, w + 2}, fresh: []bool{true, true, true, true}, over: -1, upto: 2, count: 2},
		{name: "wraps the bitmap", add: []uint64{2, 3, 1, w + 3, w + 2, w + 1, w + 1}, fresh: []bool{true, true, true, true, true, true, false},
			over: -1, upto: 3, count: 3},
		{name: "a cleared bit is not a copy", add: []uint64{2, 4, 1, 3, w + 4}, fresh: []bool{true, true, true, true, true}, over: -1, upto: 4, count: 1},
		{name: "the highest number", add: []uint64{^uint64(0)}, fresh: []bool{false}, over: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s sequenceWindow
			firstOver := -1
			for i, v := range tc.add {
				fresh, over := s.add(v)
				if fresh != tc.fresh[i] {
					t.Fatalf("add(%d) #%d = %v, want %v", v, i, fresh, tc.fresh[i])
				}
				if over && firstOver < 0 {
					firstOver = i
				}
			}
			if firstOver != tc.over {
				t.Errorf("first over at #%d, want #%d", firstOver, tc.over)
			}
			if s.upto != tc.upto || s.count != tc.count || (s.count == 0) != (s.bits == nil) {
				t.Errorf("upto %d, %d held above (bitmap allocated: %v); want upto %d, %d held", s.upto, s.count, s.bits != nil, tc.upto, tc.count)
			}
		})
	}
}

// A peer numbering its messages to grow the set is stopped at the window:
// the set never holds more than topicSeqWindow numbers, and the first
// number beyond it is reported once, naming the party and the numbers.
func TestTopicWindowBoundsTheSet(t *testing.T) {
	var r topicReplay
	p := protocol.Party{Role: "agent", Index: 3}
	var errs []error
	for v := uint64(2); v < 3*topicSeqWindow; v += 2 {
		if _, err := r.fresh(p, v); err != nil {
			errs = append(errs, err)
		}
	}
	if w := r.seen[p]; w.count > topicSeqWindow || !w.exceeded {
		t.Errorf("%d numbers held, exceeded %v; want at most %d, exceeded", w.count, w.exceeded, topicSeqWindow)
	}
	if len(errs) != 1 {
		t.Fatalf("%d errors, want one: %v", len(errs), errs)
	}
	if want := "topic message 4098 of agent[3] is more than 4096 ahead of its message 1, never received"; errs[0].Error() != want {
		t.Errorf("error %q, want %q", errs[0], want)
	}
	if fresh, err := r.fresh(p, 1); fresh || err != nil {
		t.Errorf("after the window was exceeded, message 1: fresh %v, err %v; want neither", fresh, err)
	}
	other := protocol.Party{Role: "agent", Index: 4}
	if fresh, err := r.fresh(other, 1); !fresh || err != nil {
		t.Errorf("another party's message 1: fresh %v, err %v", fresh, err)
	}
}

// The replay log keeps the newest frames within its bounds, and a
// message without a number (from a daemon that does not number them) is
// always handed over.
func TestTopicReplayLog(t *testing.T) {
	var r topicReplay
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
		ok, err := r.fresh(p, seq)
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
