package bai

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// baiSpec is a spec with a coordinator and n agents, named, and the given
// [params] and [simulation] lines.
func baiSpec(t *testing.T, n int, params, simulation string) *protocol.Spec {
	t.Helper()
	agents := make([]string, n)
	for i := range agents {
		agents[i] = fmt.Sprintf("%q", fmt.Sprintf("org%d", i+1))
	}
	text := fmt.Sprintf("protocol = \"bai\"\n[roles]\ncoordinator = \"coord\"\nagent = [%s]\n[params]\n%s\n[simulation]\n%s\n",
		strings.Join(agents, ", "), params, simulation)
	s, err := protocol.ParseSpec("spec.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRealSessionRefusedBeforeProposal checks that Registry.Check — what a
// daemon runs before proposing a spec and before accepting one — refuses
// the real sessions whose coordinator could never be built or never
// eliminate an arm, naming the key at fault, instead of leaving them to
// NewRole, after every organization has accepted.
func TestRealSessionRefusedBeforeProposal(t *testing.T) {
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		agents int
		params string
		want   string // empty: accepted
	}{
		{"independent is a simulation baseline", 64, "algorithm = \"independent\"\narms = 10",
			"params.algorithm: independent is a simulation baseline"},
		{"the coordinator must know the arms", 64, "", "params.arms: a real session must give the number of arms"},
		{"default corrupted_elimination, M = 18, 4 agents", 4, "arms = 10",
			"roles.agent: an arm falls globally after more than M = 18 votes, one per agent at most, so 4 agents can never eliminate one; use more than 18 agents"},
		{"18 agents are still too few", 18, "arms = 10", "so 18 agents can never"},
		{"dp_mase, M = 5, 5 agents", 5, "algorithm = \"dp_mase\"\narms = 10", "M = 5 votes"},
		{"η_ξ = 0", 64, "xi = 0.3\narms = 10", "params.xi: with η = 0.9 and 10 arms"},
		{"19 agents outvote M = 18", 19, "arms = 10", ""},
		{"central has no threshold", 1, "algorithm = \"central\"\narms = 10", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := reg.Check(baiSpec(t, tt.agents, tt.params, ""))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestSimulationChecks checks the simulator's side: the independent
// baseline and a spec without params.arms are simulations' to run, a
// threshold no number of agents can exceed is refused whether the arms come
// from params.arms or simulation.arms, and a disagreement between the two
// names the simulation's key (the spec has no [local] table).
func TestSimulationChecks(t *testing.T) {
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		t.Fatal(err)
	}
	arms := "arms = [0.9, 0.5, 0.3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]"
	tests := []struct {
		name       string
		params     string
		simulation string
		want       string // empty: runs
	}{
		{"independent runs in a simulation", "algorithm = \"independent\"\ndelta = 0.25", "agents = 4\n" + arms, ""},
		{"M from params.arms", "arms = 10", "agents = 4\n" + arms,
			"roles.agent: an arm falls globally after more than M = 18 votes, one per agent at most, so 4 agents"},
		{"M from simulation.arms", "", "agents = 4\n" + arms, "roles.agent: an arm falls globally after more than M = 18 votes"},
		{"params.arms disagrees with simulation.arms", "arms = 3\nalgorithm = \"central\"", "agents = 4\n" + arms,
			"simulation.arms: 10 means, but params.arms = 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := fmt.Sprintf("protocol = \"bai\"\n[params]\n%s\n[simulation]\n%s\n", tt.params, tt.simulation)
			spec, err := protocol.ParseSpec("spec.toml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			_, err = sim.Run(context.Background(), reg, spec, sim.Options{Workers: 1})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			// No party prefix ("coordinator[0]: "): refused before any role was built.
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one starting %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "local.") {
				t.Errorf("err = %v names a [local] key the spec does not have", err)
			}
		})
	}
}
