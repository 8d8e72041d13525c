package mpccb

import (
	"context"
	"fmt"
	"slices"
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

// TestSessionProgress: a session's progress, summed over its parties as a
// daemon sums it over organizations, reads steps of steps — p′ alone
// reports Step and Total, the other roles Activity only — in memory and in
// the simulator, every report on the way has Step ≤ Total = steps (or
// nothing yet), and every role that works reports some activity.
func TestSessionProgress(t *testing.T) {
	t.Run("in memory", func(t *testing.T) {
		p := DefaultParams()
		p.Arms, p.Dimensions, p.Steps, p.Window = 3, 6, 7, 2
		s := newMemSession(t, p, 3)
		if errs := sessionOutcome(s); len(errs) > 0 {
			t.Fatal(errs)
		}
		var sum protocol.Progress
		for pt, pr := range s.progress {
			sum.Step += pr.Step
			sum.Total += pr.Total
			if pt.Role != RolePuller && pr.Activity == 0 {
				t.Errorf("%s reported no activity", pt)
			}
		}
		if sum.Step != p.Steps || sum.Total != p.Steps {
			t.Errorf("the session's progress reads %d of %d; want %d of %d", sum.Step, sum.Total, p.Steps, p.Steps)
		}
	})
	t.Run("simulated", func(t *testing.T) {
		needFashionMNIST(t)
		const steps = 30
		spec, err := protocol.ParseSpec("progress.toml", []byte(fmt.Sprintf("protocol = \"mpccb\"\n[params]\nsteps = %d\nepsilon = 0.1\n[simulation]\nparties = 3\nseed = 2\n", steps)))
		if err != nil {
			t.Fatal(err)
		}
		reg, err := protocol.NewRegistry(NewFamily())
		if err != nil {
			t.Fatal(err)
		}
		var last protocol.Progress
		reports := 0
		opts := sim.Options{Workers: 1, OnProgress: func(pr protocol.Progress) {
			reports++
			if pr.Total != 0 && pr.Total != steps || pr.Step > pr.Total {
				t.Errorf("progress %d of %d on the way; want at most %d of %d", pr.Step, pr.Total, steps, steps)
			}
			last = pr
		}}
		if _, err := sim.Run(context.Background(), reg, spec, opts); err != nil {
			t.Fatal(err)
		}
		if last.Step != steps || last.Total != steps {
			t.Errorf("the session's progress ends at %d of %d after %d reports; want %d of %d", last.Step, last.Total, reports, steps, steps)
		}
	})
}

// TestWireVersions checks that the family speaks 1.3.0 and still 1.2.0
// and 1.1.0, that a role at 1.1.0 runs the previous step (20 rounds at P =
// 2, against 11), and that only 1.3.0 takes a batched session.
func TestWireVersions(t *testing.T) {
	f := Family{}
	if got := protocol.WireVersions(f); !slices.Equal(got, []string{"1.3.0", "1.2.0", "1.1.0"}) {
		t.Fatalf("versions %v", got)
	}
	for _, c := range []struct {
		v      string
		rounds int
	}{{"1.3.0", 11}, {"1.2.0", 11}, {"1.1.0", 20}} {
		g, ok := protocol.AtWireVersion(f, c.v)
		if !ok || protocol.WireVersion(g) != c.v {
			t.Fatalf("at %s: %v, version %q", c.v, ok, protocol.WireVersion(g))
		}
		p := DefaultParams()
		if g.(Family).Typed.wire == wireV110 {
			p.wire = wireV110
		}
		s, err := measureStep(p, 2)
		if err != nil {
			t.Fatal(err)
		}
		if s.rounds != c.rounds {
			t.Errorf("at %s: %d rounds a step, want %d", c.v, s.rounds, c.rounds)
		}
		_, err = g.ParseParams(map[string]any{"batch": int64(10)})
		want := "params.batch: 10 needs the contextual bandit's wire 1.3.0, and this session runs on " + c.v
		switch {
		case c.v == "1.3.0" && err != nil:
			t.Errorf("at 1.3.0, params.batch = 10: %v", err)
		case c.v != "1.3.0" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("at %s, params.batch = 10: %v, want %q", c.v, err, want)
		}
	}
	if _, ok := protocol.AtWireVersion(f, "1.0.0"); ok {
		t.Error("1.0.0 is spoken")
	}
}

// TestBatchParams: params.batch defaults to 1 (the paper's algorithm);
// a batched session's window counts batches and defaults to
// DefaultBatchWindow unless the spec gives one; batches beyond MaxBatch are
// refused naming the key.
func TestBatchParams(t *testing.T) {
	for _, c := range []struct {
		raw         map[string]any
		batch, win  int
		errContains string
	}{
		{raw: map[string]any{}, batch: 1, win: 8},
		{raw: map[string]any{"batch": int64(100)}, batch: 100, win: DefaultBatchWindow},
		{raw: map[string]any{"batch": int64(10), "window": int64(5)}, batch: 10, win: 5},
		{raw: map[string]any{"batch": int64(1000)}, batch: 1000, win: DefaultBatchWindow},
		{raw: map[string]any{"batch": int64(1001)}, errContains: "params.batch: 1001 is out of range [1, 1000]"},
		{raw: map[string]any{"batch": int64(0)}, errContains: "params.batch: 0 is out of range"},
	} {
		p, err := Family{}.ParseParams(c.raw)
		if c.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), c.errContains) {
				t.Errorf("%v: %v, want %q", c.raw, err, c.errContains)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.raw, err)
			continue
		}
		if got := p.(Params); got.Batch != c.batch || got.Window != c.win {
			t.Errorf("%v: batch %d, window %d; want %d, %d", c.raw, got.Batch, got.Window, c.batch, c.win)
		}
	}
}
