package bai

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
)

// TestClaimsWeighNoise: a claim holds only where the runs' intervals are
// apart; the same means with overlapping runs, or a single run, leave it
// unresolved, and a reversed order beyond noise refutes it.
func TestClaimsWeighNoise(t *testing.T) {
	runs := func(m, spread float64) baiPoint {
		return baiPoint{Summary: experiment.Summarize([]float64{m - spread, m, m + spread}), Accuracy: 1}
	}
	one := func(m float64) baiPoint { return baiPoint{Summary: experiment.Summarize([]float64{m}), Accuracy: 1} }
	const text = "DP-MASE's sample complexity rises as ε falls"
	tests := []struct {
		name             string
		e05, e1, e25     baiPoint
		verdict, noteHas string
	}{
		{"apart", runs(300, 5), runs(200, 5), runs(100, 5), "holds", ""},
		{"overlapping", runs(210, 50), runs(200, 50), runs(100, 5), "not resolved", "within the runs' noise at N = 64"},
		{"one run", one(300), one(200), one(100), "not resolved", "within the runs' noise"},
		{"reversed", runs(100, 5), runs(200, 5), runs(300, 5), "does not hold", "not at N = 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := map[string]map[int]baiPoint{}
			for _, s := range []string{"Corrupted ξ=0", "Corrupted ξ=0.05", "Corrupted ξ=0.1", "INDEPENDENT", "CENTRAL",
				"DP-MASE ε=0.1 unbalanced", "Corrupted ξ=0.05 unbalanced", "DP-MASE ε=0.5 β=0.3", "DP-MASE ε=0.5 β=0.5", "DP-MASE ε=0.5 β=0.8"} {
				sum[s] = map[int]baiPoint{64: runs(150, 1)}
			}
			sum["DP-MASE ε=0.05"] = map[int]baiPoint{64: tt.e05}
			sum["DP-MASE ε=0.1"] = map[int]baiPoint{64: tt.e1}
			sum["DP-MASE ε=0.25"] = map[int]baiPoint{64: tt.e25}
			for _, c := range baiClaims(sum, []int{64}) {
				if c.Text != text {
					continue
				}
				if c.Verdict() != tt.verdict || !strings.Contains(c.Note, tt.noteHas) {
					t.Errorf("%s: %s (%s); want %s with a note containing %q", c.Text, c.Verdict(), c.Note, tt.verdict, tt.noteHas)
				}
				return
			}
			t.Fatalf("no claim %q", text)
		})
	}
}
