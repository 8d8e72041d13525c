package samba

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestTuningPerDataset: each dataset runs with its own parameters — the
// embedded MovieLens means with the prototype's MovieLens ones, a means
// file with those of its description beside it (jester.toml for
// jester.txt), the command line over both — and the results file prints
// the values used and where each came from; a description with an
// unknown key is refused naming it.
func TestTuningPerDataset(t *testing.T) {
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jester := filepath.Join(dir, "jester.txt")
	if err := os.WriteFile(jester, []byte("0.6\n0.5\n0.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(dataset string, tuning Tuning) (string, error) {
		out := t.TempDir()
		_, err := Run(context.Background(), reg, Options{Out: out, Dataset: dataset, Runs: 1, Budget: 20, Ks: []int{2},
			PaillierBits: 512, Workers: 2, Seed: 3, Tuning: tuning})
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(out, "samba_results.md"))
		return string(b), err
	}
	desc := filepath.Join(dir, "jester.toml")
	tests := []struct {
		name, dataset, description string
		tuning                     Tuning
		want                       string
	}{
		{"movielens", "", "", Tuning{},
			"Parameters: ε = 0.1, ε-decreasing 1/log₂ t, τ = 0.06, β = 0.1 (the prototype's MovieLens parameters (params_MovieLens.csv))."},
		{"a file, no description", jester, "", Tuning{},
			"Parameters: ε = 0.1, ε-decreasing 1/log₂ t, τ = 0.06, β = 0.1 (the prototype's MovieLens parameters (params_MovieLens.csv))."},
		{"the command line", jester, "", Tuning{Tau: 0.02, Beta: 0.2},
			"Parameters: ε = 0.1, ε-decreasing 1/log₂ t, τ = 0.02, β = 0.2 (ε and the schedule: the prototype's MovieLens parameters (params_MovieLens.csv); τ and β: the command line)."},
		{"a description", jester, "tau = 0.02\nbeta = 0.2\nepsilon_schedule = \"ln\"\n", Tuning{},
			"Parameters: ε = 0.1, ε-decreasing 1/ln t, τ = 0.02, β = 0.2 (ε: the prototype's MovieLens parameters (params_MovieLens.csv); the schedule, τ and β: the dataset's description " + desc + ")."},
		{"the command line over a description", jester, "tau = 0.02\nbeta = 0.2\n", Tuning{Epsilon: 0.05, Tau: 0.03},
			"ε = 0.05, ε-decreasing 1/log₂ t, τ = 0.03, β = 0.2 (ε and τ: the command line; the schedule: the prototype's MovieLens parameters (params_MovieLens.csv); β: the dataset's description " + desc + ")."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(desc)
			if tt.description != "" {
				if err := os.WriteFile(desc, []byte(tt.description), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			text, err := run(tt.dataset, tt.tuning)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, tt.want) {
				i := strings.Index(text, "Parameters:")
				t.Errorf("the results file lacks\n%s\nit says\n%.300s", tt.want, text[max(i, 0):])
			}
		})
	}
	if err := os.WriteFile(desc, []byte("temperature = 0.02\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(jester, Tuning{}); err == nil || !strings.Contains(err.Error(), "unknown key temperature") {
		t.Errorf("a description with an unknown key: %v", err)
	}
}
