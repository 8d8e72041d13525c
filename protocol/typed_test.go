package protocol_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// toyParams and toyResult are the types of toy, a typed family that
// records what reaches it.
type toyParams struct{ N int }

type toyResult struct{ Sum int }

type toy struct{ seen *[]string }

func (toy) Name() string { return "toy" }
func (toy) Info() protocol.Info {
	return protocol.Info{Roles: []protocol.RoleSpec{{Name: "r", Min: 1}}}
}
func (t toy) note(format string, a ...any) { *t.seen = append(*t.seen, fmt.Sprintf(format, a...)) }

func (toy) ParseParams(raw map[string]any) (toyParams, error) {
	return protocol.ParseParams(raw, toyParams{N: 1}, func(p toyParams) error {
		if p.N < 1 {
			return errors.New("params.n: want at least 1")
		}
		return nil
	})
}

func (t toy) CheckAssignment(_ protocol.Assignment, p toyParams, simulated bool) error {
	t.note("check %d %v", p.N, simulated)
	return nil
}

func (toy) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	return protocol.NoLocalData("toy", role, table)
}

func (t toy) NewRole(_ protocol.RoleConfig, p toyParams) (protocol.Role, error) {
	t.note("role %d", p.N)
	return nil, nil
}

func (t toy) Combine(_ protocol.Assignment, p toyParams, reports map[protocol.Party][]byte) (toyResult, error) {
	return toyResult{Sum: p.N + len(reports)}, nil
}

func (toy) FormatResult(io.Writer, []byte) error { return nil }

func (t toy) PrepareSimulation(_ map[string]any, roles protocol.Assignment, p toyParams) (protocol.Prepared, error) {
	t.note("prepare %d", p.N)
	return protocol.Prepared{Assignment: roles}, nil
}

func (t toy) NewSchedule(_ map[string]any, p toyParams, _ protocol.Assignment, _ io.Reader) (protocol.Schedule, error) {
	t.note("schedule %d", p.N)
	return nil, nil
}

func (t toy) Grade(_ protocol.Grading, p toyParams, r toyResult) (any, error) {
	t.note("grade %d %d", p.N, r.Sum)
	return r, nil
}

func (t toy) SimulatedEnvironment(_ protocol.RoleConfig, p toyParams) (protocol.Environment, error) {
	t.note("environment %d", p.N)
	return nil, nil
}

func (t toy) EnvironmentShape(_ string, p toyParams, _ protocol.Assignment) (int, int64) {
	return p.N, int64(p.N)
}

type toyFamily = protocol.ErasedEnv[toy, toyParams, toyResult]

func newToy(seen *[]string) toyFamily {
	return toyFamily{Erased: protocol.Erased[toy, toyParams, toyResult]{Typed: toy{seen: seen}}}
}

// TestErasedRoundTrip: what the erased family's ParseParams and Combine
// return reaches the typed family's methods as its own types.
func TestErasedRoundTrip(t *testing.T) {
	var seen []string
	f := newToy(&seen)
	params, err := f.ParseParams(map[string]any{"n": int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := params.(toyParams); !ok {
		t.Fatalf("ParseParams returned a %T, want toyParams", params)
	}
	a := protocol.Assignment{Roles: map[string][]string{"r": {"x"}}}
	res, err := f.Combine(a, params, map[protocol.Party][]byte{{Role: "r"}: nil})
	if err != nil {
		t.Fatal(err)
	}
	if res != (toyResult{Sum: 4}) {
		t.Fatalf("Combine returned %#v, want toyResult{Sum: 4}", res)
	}
	cfg := protocol.RoleConfig{Self: protocol.Party{Role: "r"}, Assignment: a, Params: params}
	steps := []error{
		f.CheckAssignment(a, params, true),
		second(f.NewRole(cfg)),
		second(f.PrepareSimulation(nil, a, params)),
		second(f.NewSchedule(nil, params, a, nil)),
		second(f.Grade(protocol.Grading{Params: params, Result: res})),
		second(f.SimulatedEnvironment(cfg)),
	}
	for i, err := range steps {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	want := "check 3 true|role 3|prepare 3|schedule 3|grade 3 4|environment 3"
	if got := strings.Join(seen, "|"); got != want {
		t.Errorf("the typed family saw %s, want %s", got, want)
	}
	if cols, steps := f.EnvironmentShape("r", params, a); cols != 3 || steps != 3 {
		t.Errorf("EnvironmentShape = %d, %d, want 3, 3", cols, steps)
	}
}

// TestErasedWrongType: a value of another type — another family's params,
// say — is refused at the boundary with an error naming the family and
// both types, and never reaches the typed family.
func TestErasedWrongType(t *testing.T) {
	var seen []string
	f := newToy(&seen)
	a := protocol.Assignment{Roles: map[string][]string{"r": {"x"}}}
	other := ping.DefaultParams()
	cfg := protocol.RoleConfig{Self: protocol.Party{Role: "r"}, Assignment: a, Params: other}
	good := toyParams{N: 2}
	tests := []struct {
		name string
		err  error
		want string // the type named as received
	}{
		{"CheckAssignment", f.CheckAssignment(a, other, false), "ping.Params"},
		{"NewRole", second(f.NewRole(cfg)), "ping.Params"},
		{"Combine", second(f.Combine(a, other, nil)), "ping.Params"},
		{"Combine nil", second(f.Combine(a, nil, nil)), "<nil>"},
		{"PrepareSimulation", second(f.PrepareSimulation(nil, a, other)), "ping.Params"},
		{"NewSchedule", second(f.NewSchedule(nil, other, a, nil)), "ping.Params"},
		{"Grade params", second(f.Grade(protocol.Grading{Params: other, Result: toyResult{}})), "ping.Params"},
		{"Grade result", second(f.Grade(protocol.Grading{Params: good, Result: &toyResult{}})), "*protocol_test.toyResult"},
		{"SimulatedEnvironment", second(f.SimulatedEnvironment(cfg)), "ping.Params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("accepted")
			}
			msg := tt.err.Error()
			for _, s := range []string{"protocol toy", "of type " + tt.want, "want protocol_test.toy"} {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
		})
	}
	if len(seen) > 0 {
		t.Errorf("the typed family was called: %v", seen)
	}
	if cols, steps := f.EnvironmentShape("r", other, a); cols != 0 || steps != 0 {
		t.Errorf("EnvironmentShape of another family's params = %d, %d, want 0, 0 (any, unknown)", cols, steps)
	}
}

// TestFamiliesRefuseOthersParams: every family of the project, as its
// registry holds it, refuses the params of another with an error naming
// itself and the other's type; and the optional interfaces are those its
// typed implementation provides.
func TestFamiliesRefuseOthersParams(t *testing.T) {
	families := []protocol.Family{ping.Family{}, samba.Family{}, mpccb.Family{}, bai.Family{}, pfcb.Family{}}
	for i, f := range families {
		other := families[(i+1)%len(families)]
		params, err := other.ParseParams(nil)
		if err != nil {
			t.Fatalf("%s: %v", other.Name(), err)
		}
		t.Run(f.Name(), func(t *testing.T) {
			_, err := f.Combine(protocol.Assignment{}, params, nil)
			if err == nil {
				t.Fatalf("accepted %s's params", other.Name())
			}
			for _, s := range []string{"protocol " + f.Name(), other.Name() + ".Params", "want " + f.Name() + ".Params"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			if _, ok := f.(protocol.Simulator); !ok {
				t.Error("is no protocol.Simulator")
			}
			_, env := f.(protocol.Environmental)
			if want := f.Name() != ping.Name; env != want {
				t.Errorf("implements protocol.Environmental: %v, want %v", env, want)
			}
		})
	}
}

// TestLocalOf: a role's local data of its own type, none, or another type.
func TestLocalOf(t *testing.T) {
	party := protocol.Party{Role: "agent", Index: 2}
	own := &bai.AgentLocal{}
	tests := []struct {
		name    string
		local   any
		want    *bai.AgentLocal
		wantErr string
	}{
		{"own type", own, own, ""},
		{"none", nil, nil, ""},
		{"another type", &pfcb.AgentLocal{}, nil, "protocol bai: the local data of " + party.String() + " is of type *pfcb.AgentLocal, want *bai.AgentLocal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := protocol.LocalOf[*bai.AgentLocal](bai.Name, protocol.RoleConfig{Self: party, Local: tt.local})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %p, %v; want %p", got, err, tt.want)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }
