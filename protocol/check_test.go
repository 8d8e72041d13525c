package protocol_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// pickyPing is ping with an AssignmentChecker that refuses more than Max
// participants, recording how it was called and how many roles were built.
type pickyPing struct {
	ping.Family
	Max   int
	calls *[]string // "simulated n" or "real n" per call
	built *int
}

func (pickyPing) Name() string { return "pickyping" }

func (f pickyPing) CheckAssignment(a protocol.Assignment, params any, simulated bool) error {
	kind := "real"
	if simulated {
		kind = "simulated"
	}
	n := a.Count(ping.RoleParticipant)
	*f.calls = append(*f.calls, fmt.Sprintf("%s %d", kind, n))
	if _, ok := params.(ping.Params); !ok {
		return fmt.Errorf("params of type %T", params)
	}
	if n > f.Max {
		return fmt.Errorf("roles.participant: at most %d here, the spec gives %d", f.Max, n)
	}
	return nil
}

func (f pickyPing) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	*f.built++
	return f.Family.NewRole(cfg)
}

// TestAssignmentCheckerRunsBeforeRoles checks both callers of a family's
// AssignmentChecker: the simulator calls it, as simulated, with the
// assignment PrepareSimulation derived, and builds no role when it refuses;
// Registry.Check (the daemon's check of a spec before proposing or
// accepting it) calls it as a real session.
func TestAssignmentCheckerRunsBeforeRoles(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		simulate  bool
		wantCalls string
		wantErr   string // empty: accepted
	}{
		{"simulation refused", "protocol = \"pickyping\"\n[simulation]\nparticipants = 4\n", true,
			"simulated 4", "roles.participant: at most 3 here, the spec gives 4"},
		{"simulation accepted", "protocol = \"pickyping\"\n[params]\ncount = 2\n[simulation]\nparticipants = 3\n", true,
			"simulated 3", ""},
		{"real session refused", "protocol = \"pickyping\"\n[roles]\nparticipant = [\"a\", \"b\", \"c\", \"d\"]\n", false,
			"real 4", "roles.participant: at most 3 here, the spec gives 4"},
		{"real session accepted", "protocol = \"pickyping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n", false,
			"real 2", ""},
		{"bad params are reported before", "protocol = \"pickyping\"\n[roles]\nparticipant = [\"a\", \"b\", \"c\", \"d\"]\n[params]\ncount = 0\n", false,
			"", "params.count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			built := 0
			reg := registry(t, pickyPing{Max: 3, calls: &calls, built: &built})
			spec := mustSpec(t, tt.text)
			var err error
			if tt.simulate {
				_, err = sim.Run(context.Background(), reg, spec, sim.Options{Workers: 1})
			} else {
				_, _, err = reg.Check(spec)
			}
			if got := strings.Join(calls, ", "); got != tt.wantCalls {
				t.Errorf("CheckAssignment calls %q, want %q", got, tt.wantCalls)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one starting %q", err, tt.wantErr)
			}
			if built != 0 {
				t.Errorf("%d roles built for a refused session", built)
			}
		})
	}
}
