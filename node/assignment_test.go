package node

import (
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
)

// A bai spec whose coordinator could never be built — the independent
// baseline, or a voting threshold its agents can never exceed — is refused
// by the initiator's StartSession before it proposes anything: no node
// records the session or holds it active. (Before, every node accepted and
// the session aborted when the coordinator's role was built.) A good spec
// afterwards shows that proposals do leave records.
func TestStartSessionRefusesImpossibleAssignment(t *testing.T) {
	nodes := startNetwork(t, 3, func(_ int, cfg *config.Config) {
		cfg.Policy["bai"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
	})
	roles := "[roles]\ncoordinator = \"node1\"\nagent = [\"node2\", \"node3\"]\n"
	for _, c := range []struct{ name, params, want string }{
		{"independent", "algorithm = \"independent\"\narms = 10",
			"params.algorithm: independent is a simulation baseline"},
		{"corrupted_elimination with 2 agents", "arms = 10",
			"roles.agent: an arm falls globally after more than M = 18 votes, one per agent at most, so 2 agents can never eliminate one"},
		{"no params.arms", "algorithm = \"central\"", "params.arms: a real session must give the number of arms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := nodes[0].StartSession([]byte("protocol = \"bai\"\n" + roles + "[params]\n" + c.params + "\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("StartSession = %q, %v; want an error mentioning %q", id, err, c.want)
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // time for a proposal, had one been sent, to arrive
	for _, tn := range nodes {
		if recs, _ := tn.store.List(); len(recs) != 0 {
			t.Errorf("%s recorded %d sessions, want none: the first is %+v", tn.cfg.Node.Name, len(recs), recs[0].Session)
		}
		active := tn.rt.ActiveCount()
		if active != 0 {
			t.Errorf("%s holds %d active sessions, want none", tn.cfg.Node.Name, active)
		}
	}

	id, err := nodes[0].StartSession(pingSpec(3, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		if got := waitEnded(t, tn, id, 10*time.Second); got.State != stateCompleted {
			t.Errorf("%s: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}
