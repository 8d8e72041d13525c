package node

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestPolicyView: GET /v0/policy's answer is what the config's policy
// enforces at admission — enabled protocols, their initiators, roles and
// standing sessions, the max and min limits and the daemon's own
// Paillier minimum where the policy sets none — and each role says what it
// learns; a role the policy accepts but whose local data is missing says
// why it cannot be played, as Admit would decline it.
func TestPolicyView(t *testing.T) {
	reg := testRegistry(t)
	cfg, err := config.ParseConfig("c.toml", []byte(`
[node]
name = "a"
listen = ["/ip4/127.0.0.1/tcp/4001"]
[[peers]]
name = "b"
peer_id = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
[policy.samba]
roles = ["data_owner", "comp"]
initiators = ["b"]
[policy.pfcb]
roles = ["*"]
initiators = ["*"]
sessions = ["weekly", ""]
[policy.pfcb.max]
epsilon_total = 2
[policy.bai]
roles = ["agent"]
initiators = ["b"]
[policy.bai.min]
reward_range = 0.5
[local.bai.agent]
arms = [0.2, 0.5, 0.7]
`), reg)
	if err != nil {
		t.Fatal(err)
	}
	got := policyOf(cfg, reg)
	by := map[string]apitype.ProtocolPolicy{}
	for _, p := range got.Protocols {
		by[p.Protocol] = p
		for _, r := range p.Roles {
			if r.Learns == "" {
				t.Errorf("%s.%s says nothing of what it learns", p.Protocol, r.Role)
			}
		}
	}
	if got.Node != "a" || len(got.Protocols) != len(reg.Names()) {
		t.Fatalf("policy of %q with %d protocols, want a with all %d", got.Node, len(got.Protocols), len(reg.Names()))
	}
	role := func(p, r string) apitype.RolePolicy {
		for _, x := range by[p].Roles {
			if x.Role == r {
				return x
			}
		}
		t.Fatalf("%s has no role %s", p, r)
		return apitype.RolePolicy{}
	}
	limits := func(p string) string {
		b, _ := json.Marshal(by[p].Limits)
		return string(b)
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"ping disabled", !by["ping"].Enabled && len(by["ping"].Limits) == 0 && !role("ping", "participant").Accepted},
		{"mpccb disabled", !by["mpccb"].Enabled},
		{"samba for b only", by["samba"].Enabled && strings.Join(by["samba"].Initiators, ",") == "b" && by["samba"].AnyStanding},
		{"samba plays data_owner and comp only", role("samba", "data_owner").Accepted && role("samba", "comp").Accepted &&
			!role("samba", "controller").Accepted && !role("samba", "data_customer").Accepted},
		{"samba data_owner has no local data", strings.Contains(role("samba", "data_owner").Missing, "local.samba.data_owner")},
		{"samba comp needs none", role("samba", "comp").Missing == ""},
		{"samba keeps the daemon's Paillier minimum", limits("samba") == `[{"key":"paillier_bits","bound":"min","value":2048,"default":true}]`},
		{"pfcb bounds its total ε", strings.Contains(limits("pfcb"), `{"key":"epsilon_total","bound":"max","value":2,"figure":"the session's total ε`)},
		{"pfcb from anyone, two standing names", strings.Join(by["pfcb"].Initiators, ",") == "*" && !by["pfcb"].AnyStanding &&
			strings.Join(by["pfcb"].Standing, ",") == "weekly,"},
		{"bai agent configured", role("bai", "agent").Accepted && role("bai", "agent").Missing == "" && role("bai", "agent").Environment == "simulated"},
		{"bai reward range minimum", strings.Contains(limits("bai"), `{"key":"reward_range","bound":"min","value":0.5,"figure":"the width`)},
	} {
		if !c.ok {
			b, _ := json.MarshalIndent(got, "", " ")
			t.Errorf("%s: not so in\n%s", c.name, b)
		}
	}
}
