package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/libp2p/go-libp2p/core/peer"
)

// withoutSeparations is a family as a modified daemon would have it, its
// separations removed: an initiator built with it proposes assignments that
// every honest daemon refuses.
type withoutSeparations struct{ protocol.Family }

func (f withoutSeparations) Info() protocol.Info {
	info := f.Family.Info()
	info.Separations = nil
	return info
}

// TestCollusiveAssignmentsAreDeclinedEverywhere: an allowed organization
// whose daemon skips the separation check proposes sessions in which it
// plays two roles its family keeps apart. Every other participant declines,
// naming the two parties, the organization (by its own address-book name)
// and what it would learn; the session aborts at the initiator with that
// reason. A proposal of the same shape with the roles apart runs, so the
// participants' policies and local data would have let the others run.
func TestCollusiveAssignmentsAreDeclinedEverywhere(t *testing.T) {
	nodes := startNetworkWith(t, 5, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		openPolicy("mpccb")(i, cfg)
		cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: 0.2 + 0.1*float64(i)}}
		if i == 0 {
			// The files are never read: nothing gets as far as a role.
			dir := t.TempDir()
			cfg.LocalData["mpccb"] = map[string]any{}
			for role, table := range map[string]map[string]any{
				mpccb.RoleFeature:  {"features": "party0.csv"},
				mpccb.RoleReceiver: {"rewards": "rewards.csv"},
			} {
				for _, name := range table {
					if err := os.WriteFile(filepath.Join(dir, name.(string)), nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				local, err := mpccb.Family{}.DecodeLocal(role, &protocol.LocalTable{Key: protocol.LocalKey("mpccb", role), Raw: table, Dir: dir})
				if err != nil {
					t.Fatal(err)
				}
				cfg.LocalData["mpccb"][role] = local
			}
		}
	}, func(i int) []protocol.Family {
		if i == 0 {
			return []protocol.Family{withoutSeparations{samba.Family{}}, withoutSeparations{mpccb.Family{}}, bai.Family{}, pfcb.Family{}, ping.Family{}}
		}
		return nil
	})
	const sambaParams = "[params]\nbudget = 20\npaillier_bits = 512\n"
	const mpccbParams = "[params]\nsteps = 4\narms = 2\ndimensions = 2\n"
	cases := []struct {
		name, spec, want string
	}{
		{"samba: controller and a data owner",
			"protocol = \"samba\"\n[roles]\ndata_customer = \"node2\"\ncontroller = \"node1\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node1\"]\n" + sambaParams,
			`samba: controller and data_owner[2] are both "node1": the controller would open every data owner's score`},
		{"samba: controller and comp",
			"protocol = \"samba\"\n[roles]\ndata_customer = \"node2\"\ncontroller = \"node1\"\ncomp = \"node1\"\ndata_owner = [\"node4\", \"node5\"]\n" + sambaParams,
			`samba: comp and controller are both "node1": the controller's permutation would tie every score comp opens`},
		{"samba: controller and data customer",
			"protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node1\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\"]\n" + sambaParams,
			`samba: controller and data_customer are both "node1": the data customer's Paillier key would decrypt each data owner's E(s_i)`},
		{"samba: comp and a data owner",
			"protocol = \"samba\"\n[roles]\ndata_customer = \"node2\"\ncontroller = \"node3\"\ncomp = \"node1\"\ndata_owner = [\"node1\", \"node4\", \"node5\"]\n" + sambaParams,
			`samba: comp and data_owner[0] are both "node1": the data owners' mask seed would unmask every score comp opens`},
		{"samba: data customer and one of two data owners",
			"protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node1\"]\n" + sambaParams,
			`samba: data_customer and data_owner[1] are both "node1": with two data owners, the cumulative reward minus its own sum is the other data owner's sum`},
		{"mpccb: dealer and a feature party",
			"protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node1\", \"node2\"]\narm_puller = \"node3\"\nreward_receiver = \"node4\"\ndealer = \"node1\"\n" + mpccbParams,
			`mpccb: dealer and feature_party[0] are both "node1": the dealer knows the mask of every opening`},
		{"mpccb: dealer and arm puller",
			"protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node2\", \"node3\"]\narm_puller = \"node1\"\nreward_receiver = \"node4\"\ndealer = \"node1\"\n" + mpccbParams,
			`mpccb: arm_puller and dealer are both "node1": the dealer draws the exploration coins y_t`},
		{"mpccb: dealer and reward receiver",
			"protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node2\", \"node3\"]\narm_puller = \"node4\"\nreward_receiver = \"node1\"\ndealer = \"node1\"\n" + mpccbParams,
			`mpccb: dealer and reward_receiver are both "node1": the dealer draws the exploration coins y_t`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := nodes[1].reg.Check(mustParse(t, c.spec)); err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("an honest initiator's check = %v, want %q", err, c.want)
			}
			id, err := nodes[0].StartSession([]byte(c.spec))
			if err != nil {
				t.Fatalf("the permissive initiator refused its own proposal: %v", err)
			}
			got := waitEnded(t, nodes[0], id, 20*time.Second)
			if got.State != stateAborted || !strings.Contains(got.Reason, " declined: "+c.want) {
				t.Errorf("initiator: %s: %q, want aborted because a participant declined: %s", got.State, got.Reason, c.want)
			}
			for _, tn := range nodes[1:] {
				if !strings.Contains(c.spec, "\""+tn.cfg.Node.Name+"\"") {
					continue
				}
				var declines []loggedRecord
				testutil.WaitFor(t, 10*time.Second, tn.cfg.Node.Name+"'s decline", func() bool {
					declines = tn.logs.find("declined a session", "session", id)
					return len(declines) > 0
				})
				if r := declines[0].Attrs["reason"]; !strings.HasPrefix(r, c.want) {
					t.Errorf("%s declined with %q, want %q", tn.cfg.Node.Name, r, c.want)
				}
				if tn.rt.Active(id) {
					t.Errorf("%s holds the declined session", tn.cfg.Node.Name)
				}
			}
		})
	}
	// The same organization under a second spelling of its peer ID (a
	// CID's, which peer.Decode also takes), sent as a raw proposal: every
	// participant declines it before it compares organizations.
	t.Run("samba: controller and a data owner under two spellings", func(t *testing.T) {
		id := nodes[0].ID()
		spec := fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = %q\ncontroller = %q\ncomp = %q\ndata_owner = [%q, %q, %q]\n%s",
			nodes[1].ID(), id, nodes[2].ID(), nodes[3].ID(), nodes[4].ID(), peer.ToCid(id).String(), sambaParams)
		const session = "5e9a7a7e5e9a7a7e"
		for _, tn := range nodes[1:] {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := nodes[0].rt.SendControl(ctx, tn.ID(), session, &nodepb.Control{Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{Spec: []byte(spec)}}})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, tn := range nodes[1:] {
			var declines []loggedRecord
			testutil.WaitFor(t, 10*time.Second, tn.cfg.Node.Name+"'s decline", func() bool {
				declines = tn.logs.find("declined a session", "session", session)
				return len(declines) > 0
			})
			if r := declines[0].Attrs["reason"]; !strings.HasPrefix(r, "roles.data_owner[2]: ") || !strings.Contains(r, "is not written as a peer ID is in a proposal") {
				t.Errorf("%s declined with %q, want the second spelling named", tn.cfg.Node.Name, r)
			}
			if tn.rt.Active(session) {
				t.Errorf("%s holds the declined session", tn.cfg.Node.Name)
			}
		}
	})
	t.Run("samba: roles apart", func(t *testing.T) {
		spec := "protocol = \"samba\"\n[roles]\ndata_customer = \"node2\"\ncontroller = \"node1\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\"]\n" + sambaParams
		id, err := nodes[0].StartSession([]byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range nodes {
			if got := waitEnded(t, tn, id, 60*time.Second); got.State != stateCompleted {
				t.Errorf("%s: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
			}
		}
	})
}

func mustParse(t *testing.T, text string) *protocol.Spec {
	t.Helper()
	s, err := protocol.ParseSpec("spec", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
