package mpccb

import (
	"context"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// TestSharedOrganisations checks what the result says an organisation
// playing several roles learns. (The dealer plays no other role: see
// Separations and protocol's TestSeparations.)
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

// TestSimulationDataErrorsNameTheParam checks that a [params] value the
// simulation's data set cannot serve is reported under the key the spec
// wrote, params.arms or params.steps, not only as the data set's complaint.
func TestSimulationDataErrorsNameTheParam(t *testing.T) {
	cases := []struct {
		name, params, dataset string
		fashion               bool // needs the Fashion-MNIST files (the check follows reading them)
		want                  string
	}{
		{"synthetic, too many arms", "arms = 200", "synthetic", false,
			"params.arms: data set synthetic: 200 arms, want 2..100"},
		{"synthetic, more steps than contexts", "arms = 10\nsteps = 100000", "synthetic", true,
			"params.steps: data set synthetic: 100000 steps, but it has only 60000 contexts"},
		{"fashion-mnist, more steps than contexts", "steps = 100000", "fashion-mnist", true,
			"params.steps: data set fashion-mnist: 100000 steps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.fashion {
				if testing.Short() {
					t.Skip("reads and projects 60,000 images")
				}
				needFashionMNIST(t)
			}
			spec, err := protocol.ParseSpec("spec.toml", []byte("protocol = \"mpccb\"\n[params]\n"+c.params+
				"\n[simulation]\nparties = 2\ndataset = \""+c.dataset+"\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			reg, err := protocol.NewRegistry(Family{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = sim.Run(context.Background(), reg, spec, sim.Options{Workers: 1})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err = %v, want one starting %q", err, c.want)
			}
		})
	}
}
