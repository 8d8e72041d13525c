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
	"github.com/bandit-node/bandit-node/protocol/ping"
)

// slowPing is ping whose participants take Delay to examine a proposal.
type slowPing struct {
	ping.Family
	Delay time.Duration
}

func (slowPing) Name() string { return "slowping" }

func (f slowPing) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	time.Sleep(f.Delay)
	return f.Family.DecodeLocal(role, table)
}

func slowPingSpec(count int, names ...string) []byte {
	return []byte(strings.Replace(string(pingSpec(count, names...)), "\"ping\"", "\"slowping\"", 1))
}

func openPolicy(fam string) func(int, *config.Config) {
	return func(_ int, cfg *config.Config) {
		cfg.Policy[fam] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
	}
}

// A participant slower to accept than peer_timeout − heartbeat_interval must
// not make the session abort for silence: liveness is judged from the start
// of the running phase.
func TestSlowAcceptIsNotSilence(t *testing.T) {
	nodes := startNetworkWith(t, 3, func(i int, cfg *config.Config) {
		openPolicy("slowping")(i, cfg)
		// The propose timeout (5 s in tests) is not under test: a loaded
		// machine must not spend the 1.5 s it leaves after the slow accept.
		cfg.Session.ProposeTimeout.Duration = 10 * time.Second
	}, func(i int) []protocol.Family {
		delay := time.Duration(0)
		if i == 2 {
			delay = 3500 * time.Millisecond // peer_timeout is 3s in tests
		}
		return []protocol.Family{ping.Family{}, slowPing{Delay: delay}}
	})
	id, err := nodes[0].StartSession(slowPingSpec(20, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		if got := waitEnded(t, tn, id, 20*time.Second); got.State != stateCompleted {
			t.Errorf("%s: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}

// A proposal its initiator repeats while a participant still examines the
// first copy — the initiator resends every few seconds until answered, and
// on a loaded machine an examination can take longer — is examined once: the
// session runs, instead of the second examination finding the session ID
// taken by the first and declining it ("session ID … is already used", seen
// on a 103-daemon testnet sharing two cores). node3, slower still, keeps the
// session in its proposal while node2 examines.
func TestProposalRepeatedDuringExaminationIsExaminedOnce(t *testing.T) {
	nodes := startNetworkWith(t, 3, func(i int, cfg *config.Config) {
		openPolicy("slowping")(i, cfg)
		cfg.Session.ProposeTimeout.Duration = 10 * time.Second
	}, func(i int) []protocol.Family {
		delay := time.Duration(i) * 700 * time.Millisecond // node2 0.7 s, node3 1.4 s
		return []protocol.Family{ping.Family{}, slowPing{Delay: delay}}
	})
	spec := slowPingSpec(20, "node1", "node2", "node3")
	id, err := nodes[0].StartSession(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The repeat, as the initiator's resend would be, while node2 is still
	// in its first examination (0.7 s).
	repeatProposal(t, nodes[0], nodes[1], id)
	for _, tn := range nodes {
		if got := waitEnded(t, tn, id, 20*time.Second); got.State != stateCompleted {
			t.Errorf("%s: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}

// An abort that reaches a participant while it is still examining the
// proposal must still end the session there, with the same reason.
func TestAbortBeforeRegistrationStillArrives(t *testing.T) {
	nodes := startNetworkWith(t, 3, func(i int, cfg *config.Config) {
		openPolicy("slowping")(i, cfg)
		if i == 2 {
			cfg.Policy = map[string]config.PolicyConfig{} // node3 declines at once
		}
	}, func(i int) []protocol.Family {
		delay := time.Duration(0)
		if i == 1 {
			delay = time.Second
		}
		return []protocol.Family{ping.Family{}, slowPing{Delay: delay}}
	})
	id, err := nodes[0].StartSession(slowPingSpec(5, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes[:2] {
		got := waitEnded(t, tn, id, 5*time.Second) // well before propose_timeout + peer_timeout
		if got.State != stateAborted || !strings.Contains(got.Reason, "node3 declined") {
			t.Errorf("%s: %s: %q, want aborted because node3 declined", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}

// A proposal reusing the ID of a stored session is declined and leaves the
// stored record alone.
func TestSessionIDCannotBeReused(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	id, err := nodes[0].StartSession(pingSpec(3, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitEnded(t, nodes[1], id, 10*time.Second); got.State != stateCompleted {
		t.Fatalf("first session: %s %s", got.State, got.Reason)
	}
	spec := []byte("protocol = \"ping\"\n[roles]\nparticipant = [\"" + nodes[2].ID().String() + "\", \"" + nodes[1].ID().String() + "\"]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := nodes[2].rt.SendControl(ctx, nodes[1].ID(), id, &nodepb.Control{Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{Spec: spec}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	rec, err := nodes[1].store.Get(id)
	if err != nil || rec.Session.State != stateCompleted || rec.Session.Initiator != "node1" {
		t.Fatalf("the stored session was overwritten: %+v, %v", rec, err)
	}
}

// A node built but not yet running must not crash on a proposal.
func TestProposalBeforeRunDoesNotCrash(t *testing.T) {
	cfgs := testConfigs(t, 2)
	running := startNode(t, cfgs[0])
	idle, err := New(cfgs[1], testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { idle.shutdown() }()
	testutil.WaitFor(t, 10*time.Second, "node1 to reach node2", func() bool { return running.host.Connected(idle.ID()) })
	id, err := running.StartSession(pingSpec(3, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitEnded(t, running, id, 10*time.Second); got.State != stateCompleted {
		t.Fatalf("%s: %s", got.State, got.Reason)
	}
}

// A proposal repeated by its initiator — it resends to participants that
// have not answered, in case the answer was lost — is accepted again, not
// declined as a reused session ID, and the session runs normally.
func TestRepeatedProposalIsAcceptedAgain(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	id, err := nodes[0].StartSession(pingSpec(3000, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "node2 to accept", func() bool { return nodes[1].rt.Active(id) })
	repeatProposal(t, nodes[0], nodes[1], id)
	for _, tn := range nodes {
		if got := waitEnded(t, tn, id, 30*time.Second); got.State != stateCompleted {
			t.Errorf("%s: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}

// repeatProposal sends participant to the proposal of session id again, as
// its initiator's resend would.
func repeatProposal(t *testing.T, initiator, participant *testNode, id string) {
	t.Helper()
	snap, ok := initiator.rt.Snapshot(id)
	if !ok {
		t.Fatal("the session is not active on its initiator")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	propose := &nodepb.Control{Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{Spec: []byte(snap.Session.Spec)}}}
	if err := initiator.rt.SendControl(ctx, participant.ID(), id, propose); err != nil {
		t.Fatal(err)
	}
}
