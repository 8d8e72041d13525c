package node

import (
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestWeakPaillierKeyDeclinedOnDaemons: on real daemons, a SAMBA proposal
// with paillier_bits = 512 is declined by a participant whose policy opens
// SAMBA to everybody but says nothing about key sizes (as init
// --policy-open writes it), with a reason naming both numbers; the
// initiator, whose policy allows 512 explicitly, proposed it. The session
// aborts at the initiator with that reason.
func TestWeakPaillierKeyDeclinedOnDaemons(t *testing.T) {
	nodes := startNetwork(t, 5, func(i int, cfg *config.Config) {
		pol := config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i != 2 { // node3, the comp, keeps the default
			pol.Min = map[string]float64{"paillier_bits": 512}
		}
		cfg.Policy["samba"] = pol
		cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: 0.5}}
	})
	spec := "protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\"]\n[params]\nbudget = 20\npaillier_bits = 512\n"
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		t.Fatalf("the initiator, whose policy allows 512 bits, refused: %v", err)
	}
	got := waitEnded(t, nodes[0], id, 30*time.Second)
	const want = "params.paillier_bits = 512 is under node3's minimum of 2048 (policy.samba.min.paillier_bits is not set"
	if got.State != stateAborted || !strings.Contains(got.Reason, want) {
		t.Fatalf("session ended %s (%q), want aborted with %q", got.State, got.Reason, want)
	}
	// A daemon whose own policy is the default refuses to initiate one too.
	if _, err := nodes[2].StartSession([]byte(spec)); err == nil || !strings.Contains(err.Error(), "params.paillier_bits = 512 is under node3's minimum of 2048") {
		t.Errorf("node3 initiating a 512-bit session: err = %v", err)
	}
}

// sambaTestPolicy is an open SAMBA policy that allows the 512-bit Paillier
// keys the tests use for speed, which a daemon refuses by default.
func sambaTestPolicy() config.PolicyConfig {
	return config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}, Min: map[string]float64{"paillier_bits": 512}}
}

// TestPFCBSpendBoundedOnDaemons: on real daemons, a P-FCB proposal whose
// total ε per published value is over a participant's [policy.pfcb.max]
// epsilon_total is declined with both numbers named; one within it runs,
// and the accepting participant's log states what the session spends.
func TestPFCBSpendBoundedOnDaemons(t *testing.T) {
	const n, m = 3, 4
	in, err := pfcb.NewInstance("uniform", n, m, 0.4, 7)
	if err != nil {
		t.Fatal(err)
	}
	nodes := startNetwork(t, n, func(i int, cfg *config.Config) {
		pol := config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i == 2 {
			pol.Max = map[string]float64{"epsilon_total": 1}
		}
		cfg.Policy["pfcb"] = pol
		cfg.LocalData["pfcb"] = map[string]any{"agent": &pfcb.AgentLocal{
			Qualities: in.Qualities, Costs: in.Costs[i], Capacities: in.Capacities[i], Rate: 50000}}
	})
	// T = 5,000: τ = 256 … 4,096, Z = 5; Σ ε^z = ε (5/(2 ln 5000) + 1/2 − 1/64) = 0.7779 ε.
	spec := func(eps string) string {
		return "protocol = \"pfcb\"\n[roles]\nagent = [\"node1\", \"node2\", \"node3\"]\n[params]\nrounds = 5000\nepsilon = " + eps + "\n"
	}
	id, err := nodes[0].StartSession([]byte(spec("2")))
	if err != nil {
		t.Fatal(err)
	}
	got := waitEnded(t, nodes[0], id, 30*time.Second)
	const want = "epsilon_total = 1.556 (the session's total ε for each published value, by basic composition over its communication rounds) exceeds node3's limit of 1 (policy.pfcb.max.epsilon_total)"
	if got.State != stateAborted || !strings.Contains(got.Reason, want) {
		t.Fatalf("ε = 2: session ended %s (%q), want aborted with %q", got.State, got.Reason, want)
	}
	done, _ := completedSession[pfcb.Result](t, nodes[0], spec("1"), 60*time.Second)
	accepted := nodes[2].logs.find("accepted a session", "session", done.ID)
	if len(accepted) != 1 || !strings.Contains(accepted[0].Attrs["figures"], "epsilon_total = 0.7779") ||
		!strings.Contains(accepted[0].Attrs["figures"], "epsilon_total_pair = 1.556") {
		t.Errorf("node3's log of the accepted session: %v, want its figures", accepted)
	}
}
