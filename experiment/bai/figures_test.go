package bai

import (
	"strings"
	"testing"
)

// TestEpochSplits checks that a DP-MASE point whose runs fall into two
// levels (an epoch apart) is found with the runs of each level, that runs of
// one epoch are not split, and that the other algorithms are left alone.
func TestEpochSplits(t *testing.T) {
	grid := []baiSeries{
		{Name: "DP-MASE ε=0.25", Algorithm: "dp_mase", Figures: []string{"fig1_dp_mase"}, Distribution: "uniform"},
		{Name: "Corrupted ξ=0", Algorithm: "corrupted", Figures: []string{"fig1_corrupted"}, Distribution: "uniform"},
	}
	runsAt := func(series string, n int, steps ...int64) []Session {
		var rs []Session
		for i, s := range steps {
			rs = append(rs, Session{Series: series, Agents: n, Run: i, SampleComplexity: s})
		}
		return rs
	}
	tests := []struct {
		name        string
		runs        []Session
		early, late int
	}{
		{"two epochs", runsAt("DP-MASE ε=0.25", 512, 342695, 1514683, 341315, 1520823, 337014), 3, 2},
		{"one epoch", runsAt("DP-MASE ε=0.25", 512, 663984, 649850, 680201, 652656), 0, 0},
		{"one run", runsAt("DP-MASE ε=0.25", 512, 663984), 0, 0},
		{"not DP-MASE", runsAt("Corrupted ξ=0", 512, 100000, 400000), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := epochSplits(grid, tt.runs, []int{512})
			if tt.early == 0 {
				if len(got) != 0 {
					t.Errorf("splits %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || len(got[0].Early) != tt.early || len(got[0].Late) != tt.late {
				t.Fatalf("splits %+v, want one of %d early and %d late runs", got, tt.early, tt.late)
			}
			if sp := got[0]; sp.EarlyPerAgent < 600 || sp.EarlyPerAgent > 700 || sp.LatePerAgent < 2900 || sp.LatePerAgent > 3000 {
				t.Errorf("per agent: %.0f early, %.0f late; want about 667 and 2965", sp.EarlyPerAgent, sp.LatePerAgent)
			}
		})
	}
}

// TestBAIFiguresCaption checks the results file's figures section: every
// figure with its three files, the epoch explanation once above them, the
// split points under the DP-MASE figure they belong to, and no epochs under
// Corrupted Elimination.
func TestBAIFiguresCaption(t *testing.T) {
	o := Options{Runs: 2, Agents: []int{256}, Problem: 2}
	grid := baiGrid()
	var runs []Session
	for _, s := range grid {
		runs = append(runs, Session{Series: s.Name, Agents: 256, Run: 0, SampleComplexity: 170000},
			Session{Series: s.Name, Agents: 256, Run: 1, SampleComplexity: 172000})
	}
	runs[1].SampleComplexity = 760000 // grid[0], DP-MASE ε=0.05: one run an epoch later
	var b strings.Builder
	writeBAIFigures(&b, o, grid, runs)
	out := b.String()
	for _, fig := range baiFigures() {
		for _, ext := range []string{"png", "svg", "pdf"} {
			if f := "bai_problem2_" + fig.Name + "." + ext; !strings.Contains(out, "("+f+")") {
				t.Errorf("no link to %s", f)
			}
		}
	}
	sections := strings.Split(out, "\n### ")
	if n := strings.Count(sections[0], "**Why DP-MASE's curves jump.**"); n != 1 {
		t.Errorf("the explanation of the jumps appears %d times above the figures, want once", n)
	}
	for _, sec := range sections[1:] {
		jumps := strings.Contains(sec, "ended an epoch apart")
		switch {
		case strings.HasPrefix(sec, "Figure 1 (left)"):
			if !jumps || !strings.Contains(sec, "DP-MASE ε=0.05, N = 256: 1 run at ≈ 170000 steps (664 per agent), 1 run at ≈ 760000 (2969 per agent), ×4.5") {
				t.Errorf("Figure 1 (left) does not explain the split:\n%s", sec)
			}
		case strings.HasPrefix(sec, "Figure 5"):
			if jumps || !strings.Contains(sec, "all of DP-MASE's runs ended in the same epoch") {
				t.Errorf("Figure 5 has no split but says:\n%s", sec)
			}
		case strings.Contains(sec, "Corrupted"):
			if jumps || strings.Contains(sec, "epoch") {
				t.Errorf("a Corrupted Elimination figure speaks of epochs:\n%s", sec)
			}
		}
	}
}

// TestBAIFiguresNoSplit checks that without a point split across epochs the
// explanation is left out.
func TestBAIFiguresNoSplit(t *testing.T) {
	o := Options{Runs: 2, Agents: []int{256}, Problem: 1}
	grid := baiGrid()
	var runs []Session
	for _, s := range grid {
		runs = append(runs, Session{Series: s.Name, Agents: 256, Run: 0, SampleComplexity: 170000},
			Session{Series: s.Name, Agents: 256, Run: 1, SampleComplexity: 172000})
	}
	var b strings.Builder
	writeBAIFigures(&b, o, grid, runs)
	if out := b.String(); strings.Contains(out, "Why DP-MASE's curves jump") || strings.Count(out, "no jumps here") != 3 {
		t.Errorf("no split, but:\n%s", out)
	}
}
