package mpccb

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestSharedOrganisations checks what the result says an organisation
// playing several roles learns, and that a dealer holding features is
// refused.
func TestSharedOrganisations(t *testing.T) {
	cases := []struct {
		name  string
		roles map[string][]string
		want  string // a phrase of the note; "" for no note
	}{
		{"separate", map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}, ""},
		{"puller holds features", map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"a"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}, "learns every a_t"},
		{"receiver holds features", map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"b"}, RoleDealer: {"e"}}, "learns every r_t"},
		{"puller and receiver", map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"c"}, RoleDealer: {"e"}}, "learns every a_t and r_t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			notes := strings.Join(sharedOrgs(protocol.Assignment{Roles: c.roles}), "; ")
			if c.want == "" && notes != "" || !strings.Contains(notes, c.want) {
				t.Errorf("notes %q, want one containing %q", notes, c.want)
			}
		})
	}
	a := protocol.Assignment{Roles: map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"b"}}}
	_, err := newDealer(protocol.RoleConfig{Self: protocol.Party{Role: RoleDealer}, Assignment: a}, DefaultParams())
	if err == nil || !strings.Contains(err.Error(), "would know every mask") {
		t.Errorf("a dealer that also holds features: %v", err)
	}
}

func TestParamsValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Params)
		want string
	}{
		{"defaults", func(*Params) {}, ""},
		{"no exploration", func(p *Params) { p.Epsilon = 0 }, "params.epsilon"},
		{"one arm", func(p *Params) { p.Arms = 1 }, "params.arms"},
		{"too wide", func(p *Params) { p.Arms, p.Dimensions = 256, 100 }, "fit the wire"},
		{"precision", func(p *Params) { p.PrecisionBits = 30 }, "params.precision_bits"},
		{"window", func(p *Params) { p.Window = 0 }, "params.window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.edit(&p)
			err := p.validate()
			if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
				t.Errorf("validate: %v, want %q", err, c.want)
			}
		})
	}
}
