package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// simulatedSAMBA is the part of simulate --json a test of a SAMBA
// simulation with environments of one's own reads.
type simulatedSAMBA struct {
	Result struct {
		Reward    *int64  `json:"cumulative_reward"`
		Reference *int64  `json:"reference_cumulative_reward"`
		Pulls     []int64 `json:"pulls"`
	} `json:"result"`
	Simulation struct {
		Environments map[string]sim.EnvironmentUse `json:"environments"`
	} `json:"simulation"`
}

// ownSAMBASpec is a SAMBA spec of budget steps over arms whose
// [simulation.local.data_owner] table is table.
func ownSAMBASpec(budget int, arms, table string) string {
	return fmt.Sprintf("protocol = \"samba\"\n[params]\nalgorithm = \"ucb\"\nbudget = %d\npaillier_bits = 512\n"+
		"[simulation]\narms = [%s]\nseed = 3\n%s", budget, arms, table)
}

// TestSimulateWithOwnEnvironments: `simulate` asks the program or the
// replayed file that a spec's [simulation.local.<role>] table names,
// instead of the family's simulated arms, for the parties it names, as
// the daemon would. A data owner's real exec program (examples/
// environments/bernoulli_owner, built here) answers owners 0 and 1 with an
// arm that always pays and one that never does, owner 2 keeps a simulated
// arm of mean 0: the cumulative reward is arm 0's pulls, each program's
// queries its arm's pulls, and no reference run is claimed. A replayed
// file of two columns does the same for two owners.
func TestSimulateWithOwnEnvironments(t *testing.T) {
	dir := t.TempDir()
	owner := filepath.Join(dir, "bernoulli_owner")
	build := exec.Command("go", "build", "-o", owner, "./examples/environments/bernoulli_owner")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building bernoulli_owner: %v\n%s", err, out)
	}
	const budget = 60
	if err := os.WriteFile(filepath.Join(dir, "rewards.csv"), []byte("arm0,arm1\n"+strings.Repeat("1,0\n", budget)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, arms, table string
		own               []int // the owners the table answers
	}{
		{"exec", "0.5, 0.5, 0", fmt.Sprintf("[simulation.local.data_owner]\nsource = \"exec\"\ncommand = [%q, \"-means\", \"1,0,1\"]\nparties = [0, 1]\n", owner), []int{0, 1}},
		{"replay", "0.5, 0.5", "[simulation.local.data_owner]\nsource = \"replay\"\nfile = \"rewards.csv\"\n", []int{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, err := run(t, "simulate", writeSpec(t, dir, c.name+".toml", ownSAMBASpec(budget, c.arms, c.table)), "--json")
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var res simulatedSAMBA
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			r := res.Result
			var pulls int64
			for _, n := range r.Pulls {
				pulls += n
			}
			if r.Reward == nil || len(r.Pulls) < 2 || *r.Reward != r.Pulls[0] || pulls != budget {
				t.Fatalf("cumulative reward %v, pulls %v: want the pulls of arm 0, the only one that pays", r.Reward, r.Pulls)
			}
			if r.Reference != nil {
				t.Errorf("a reference cumulative reward %d is claimed for arms the simulation did not draw", *r.Reference)
			}
			envs := res.Simulation.Environments
			if len(envs) != len(c.own) {
				t.Errorf("environments %v, want %d of them", envs, len(c.own))
			}
			for _, i := range c.own {
				u := envs[fmt.Sprintf("data_owner[%d]", i)]
				if u.Source != c.name || u.Queries != r.Pulls[i] {
					t.Errorf("data_owner[%d]'s environment %+v; want %s with %d queries, its pulls", i, u, c.name, r.Pulls[i])
				}
			}
			text, stderr, err := run(t, "simulate", filepath.Join(dir, c.name+".toml"))
			if err != nil || !strings.Contains(text, "data_owner[0]: "+c.name+" answered") {
				t.Errorf("simulate without --json does not say what the environments did: %v\n%s%s", err, text, stderr)
			}
		})
	}
}

// TestSimulateOwnEnvironmentErrors: a [simulation.local] table that
// cannot be is refused, naming its key.
func TestSimulateOwnEnvironmentErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, table, want, code, field string }{
		{"no such role", "[simulation.local.observer]\nsource = \"replay\"\nfile = \"r.csv\"\n", `simulation.local.observer: the session has no role "observer"`,
			"spec.invalid_value", "simulation.local.observer"},
		{"a role that asks nothing", "[simulation.local.comp]\nsource = \"replay\"\nfile = \"r.csv\"\n", "simulation.local.comp: role comp asks no environment",
			"spec.invalid_value", "simulation.local.comp"},
		{"a party out of range", "[simulation.local.data_owner]\nsource = \"replay\"\nfile = \"r.csv\"\nparties = [2]\n", "simulation.local.data_owner.parties: data_owner has 2 parties, indices 0 to 1; 2 is none of them",
			"spec.invalid_value", "simulation.local.data_owner.parties"},
		{"simulated", "[simulation.local.data_owner]\nsource = \"simulated\"\n", `simulation.local.data_owner.source: want "exec", "http" or "replay"`,
			"spec.invalid_value", "simulation.local.data_owner.source"},
		{"a stray key", "[simulation.local.data_owner]\nsource = \"replay\"\nfile = \"r.csv\"\nbernoulli = 0.5\n", "simulation.local.data_owner.bernoulli: unknown key",
			"spec.unknown_key", "simulation.local.data_owner.bernoulli"},
		{"no program", "[simulation.local.data_owner]\nsource = \"exec\"\ncommand = [\"./no-such-owner\"]\n", "simulation.local.data_owner.command: ",
			"spec.invalid_value", "simulation.local.data_owner.command"},
		{"no file", "[simulation.local.data_owner]\nsource = \"replay\"\nfile = \"missing.csv\"\n", "missing.csv", "", ""},
	}
	if err := os.WriteFile(filepath.Join(dir, "r.csv"), []byte("1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := writeSpec(t, dir, fmt.Sprintf("s%d.toml", i), ownSAMBASpec(4, "0.5, 0.5", c.table))
			_, _, err := run(t, "simulate", spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			if c.code == "" {
				return
			}
			// Under --json, the error's code and field, as the control
			// API gives a spec's.
			out, _, _ := run(t, "simulate", spec, "--json")
			var e apitype.Error
			if err := json.Unmarshal([]byte(out), &e); err != nil || e.Code != c.code || e.Field != c.field {
				t.Errorf("--json: code %q field %q, want %q %q: %s", e.Code, e.Field, c.code, c.field, out)
			}
		})
	}
}
