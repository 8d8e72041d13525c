package protocol_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// rolesTOML renders an assignment as a spec's [roles] table.
func rolesTOML(roles map[string][]string) string {
	var b strings.Builder
	b.WriteString("[roles]\n")
	for _, r := range []string{"data_customer", "controller", "comp", "data_owner", "feature_party", "arm_puller", "reward_receiver", "dealer", "coordinator", "agent", "participant"} {
		if orgs, ok := roles[r]; ok {
			fmt.Fprintf(&b, "%s = [%s]\n", r, `"`+strings.Join(orgs, `", "`)+`"`)
		}
	}
	return b.String()
}

// TestSeparations: every pair of roles a family refuses to give one
// organization is refused by Registry.Check — what every participant runs
// before it accepts a proposal — with the two parties, the organization and
// the reason; and the pairs each family allows (docs/security.md, "Roles one
// organization may not combine") are accepted.
func TestSeparations(t *testing.T) {
	reg := registry(t, samba.Family{}, mpccb.Family{}, bai.Family{}, pfcb.Family{}, ping.Family{})
	sambaRoles := func(customer, controller, comp string, owners ...string) map[string][]string {
		return map[string][]string{"data_customer": {customer}, "controller": {controller}, "comp": {comp}, "data_owner": owners}
	}
	mpccbRoles := func(puller, receiver, dealer string, features ...string) map[string][]string {
		return map[string][]string{"feature_party": features, "arm_puller": {puller}, "reward_receiver": {receiver}, "dealer": {dealer}}
	}
	tests := []struct {
		name     string
		protocol string
		params   string
		roles    map[string][]string
		want     string // the whole error; empty: accepted
	}{
		{"samba: distinct", "samba", "", sambaRoles("dc", "ctl", "comp", "a", "b", "c"), ""},
		{"samba: controller and a data owner", "samba", "", sambaRoles("dc", "globex", "comp", "a", "b", "c", "globex"),
			`samba: controller and data_owner[3] are both "globex": the controller would open every data owner's score (every data owner holds comp's AES key and the masks' seed)`},
		{"samba: controller and comp", "samba", "", sambaRoles("dc", "acme", "acme", "a", "b"),
			`samba: comp and controller are both "acme": the controller's permutation would tie every score comp opens, and the arm it picks, to its data owner`},
		{"samba: controller and data customer", "samba", "", sambaRoles("acme", "acme", "comp", "a", "b"),
			`samba: controller and data_customer are both "acme": the data customer's Paillier key would decrypt each data owner's E(s_i), which the controller receives one by one`},
		{"samba: comp and a data owner", "samba", "", sambaRoles("dc", "ctl", "acme", "acme", "b"),
			`samba: comp and data_owner[0] are both "acme": the data owners' mask seed would unmask every score comp opens`},
		{"samba: data customer and one of two data owners", "samba", "", sambaRoles("acme", "ctl", "comp", "a", "acme"),
			`samba: data_customer and data_owner[1] are both "acme": with two data owners, the cumulative reward minus its own sum is the other data owner's sum`},
		{"samba: data customer and one of three data owners", "samba", "", sambaRoles("acme", "ctl", "comp", "a", "acme", "c"), ""},
		{"samba: data customer and comp", "samba", "", sambaRoles("acme", "ctl", "acme", "a", "b"), ""},
		{"samba: one organization, two data owners", "samba", "", sambaRoles("dc", "ctl", "comp", "a", "a"),
			`roles.data_owner: "a" is listed twice`},

		{"mpccb: distinct", "mpccb", "", mpccbRoles("p1", "p2", "d", "f1", "f2"), ""},
		{"mpccb: dealer and a feature party", "mpccb", "", mpccbRoles("p1", "p2", "f2", "f1", "f2"),
			`mpccb: dealer and feature_party[1] are both "f2": the dealer knows the mask of every opening, so it would see every feature, arm and reward`},
		{"mpccb: dealer and arm puller", "mpccb", "", mpccbRoles("d", "p2", "d", "f1", "f2"),
			`mpccb: arm_puller and dealer are both "d": the dealer draws the exploration coins y_t, so p′ would know which arms are the model's choice on the contexts, and a_t would lose its log(|A|/ε)-DP`},
		{"mpccb: dealer and reward receiver", "mpccb", "", mpccbRoles("p1", "d", "d", "f1", "f2"),
			`mpccb: dealer and reward_receiver are both "d": the dealer draws the exploration coins y_t, so p″ would know which rewards come from the model's choice on the contexts, and r_t would lose its DP`},
		{"mpccb: arm puller and reward receiver", "mpccb", "", mpccbRoles("p", "p", "d", "f1", "f2"), ""},
		{"mpccb: a feature party pulls the arms", "mpccb", "", mpccbRoles("f1", "p2", "d", "f1", "f2"), ""},
		{"mpccb: a feature party receives the rewards", "mpccb", "", mpccbRoles("p1", "f2", "d", "f1", "f2"), ""},

		{"bai: coordinator and an agent", "bai", "algorithm = \"central\"\narms = 4\n",
			map[string][]string{"coordinator": {"a"}, "agent": {"a", "b"}}, ""},
		{"pfcb: agents", "pfcb", "", map[string][]string{"agent": {"a", "b"}}, ""},
		{"ping: participants", "ping", "", map[string][]string{"participant": {"a", "b"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := fmt.Sprintf("protocol = %q\n%s[params]\n%s", tt.protocol, rolesTOML(tt.roles), tt.params)
			_, _, err := reg.Check(mustSpec(t, text))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant    %s", err, tt.want)
			}
			var sep *protocol.SeparationError
			if strings.Contains(tt.want, " are both ") && !errors.As(err, &sep) {
				t.Errorf("err is a %T, want a *protocol.SeparationError", err)
			}
		})
	}
}

// TestSimulateRefusesSeparatedRoles: the simulator refuses, before it
// builds any role, an assignment its family separates, so that simulate
// shows the same refusal as a daemon.
func TestSimulateRefusesSeparatedRoles(t *testing.T) {
	reg := registry(t, samba.Family{})
	text := "protocol = \"samba\"\n" + rolesTOML(map[string][]string{"data_customer": {"dc"}, "controller": {"x"}, "comp": {"x"}, "data_owner": {"a", "b"}}) +
		"[params]\nbudget = 10\npaillier_bits = 512\n[simulation]\narms = [0.5, 0.4]\n"
	_, err := sim.Run(context.Background(), reg, mustSpec(t, text), sim.Options{Workers: 1})
	var sep *protocol.SeparationError
	if !errors.As(err, &sep) || sep.Org != "x" {
		t.Fatalf("Run = %v, want the refusal of comp and controller both played by x", err)
	}
}

// badSeparations is bai with a separation table of its own, to check that
// a registry refuses a family whose table is wrong.
type badSeparations struct {
	bai.Family
	seps []protocol.Separation
}

func (f badSeparations) Info() protocol.Info {
	info := f.Family.Info()
	info.Separations = f.seps
	return info
}

func TestNewRegistryChecksSeparations(t *testing.T) {
	for _, tt := range []struct {
		name string
		seps []protocol.Separation
		want string
	}{
		{"unknown role", []protocol.Separation{{A: "agent", B: "nobody", Why: "x"}}, `separation 0: protocol bai has no role "nobody"`},
		{"same role", []protocol.Separation{{A: "agent", B: "agent", Why: "x"}}, "separation 0: roles agent and agent are the same"},
		{"no reason", []protocol.Separation{{A: "agent", B: "coordinator", Why: " "}}, "separation 0 (agent, coordinator): no reason given"},
		{"listed twice", []protocol.Separation{{A: "agent", B: "coordinator", Why: "x"}, {A: "coordinator", B: "agent", Why: "y"}},
			"separation 1: coordinator and agent are listed twice"},
		{"good", []protocol.Separation{{A: "agent", B: "coordinator", Why: "x"}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := protocol.NewRegistry(badSeparations{seps: tt.seps})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewRegistry = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
