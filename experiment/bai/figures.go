package bai

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bandit-node/bandit-node/protocol/bai"
)

// epochGap is the smallest ratio between two runs' sample complexities, at
// one point, that counts as the runs having ended in different epochs of
// DP-MASE. Epochs grow 2–4 fold (see writeBAIFigures), so runs an epoch
// apart differ by a factor of about 2 or more, while runs ending in the same
// epoch differ by a few percent (the agents' draws of the global steps).
const epochGap = 1.5

// epochSplit is a point of a DP-MASE series whose runs ended in two epochs:
// the sample complexities of the runs that ended earlier and later.
type epochSplit struct {
	Series        string
	Agents        int
	Early, Late   []float64
	Figures       []string
	Unbalanced    bool
	EarlyPerAgent float64
	LatePerAgent  float64
}

// epochSplits finds the points of the DP-MASE series whose runs fall into two
// groups with at least epochGap between them: sorted by sample complexity,
// the runs split at the largest ratio between neighbours when it is at least
// epochGap.
func epochSplits(grid []baiSeries, runs []Session, agents []int) []epochSplit {
	var out []epochSplit
	for _, s := range grid {
		if s.Algorithm != bai.AlgDPMASE {
			continue
		}
		for _, n := range agents {
			var xs []float64
			for _, r := range runs {
				if r.Series == s.Name && r.Agents == n {
					xs = append(xs, float64(r.SampleComplexity))
				}
			}
			slices.Sort(xs)
			cut, ratio := 0, 0.0
			for i := 1; i < len(xs); i++ {
				if xs[i-1] > 0 && xs[i]/xs[i-1] > ratio {
					cut, ratio = i, xs[i]/xs[i-1]
				}
			}
			if ratio < epochGap {
				continue
			}
			sp := epochSplit{Series: s.Name, Agents: n, Early: xs[:cut], Late: xs[cut:], Figures: s.Figures,
				Unbalanced: s.Distribution != "uniform"}
			sp.EarlyPerAgent = meanOf(sp.Early) / float64(n)
			sp.LatePerAgent = meanOf(sp.Late) / float64(n)
			out = append(out, sp)
		}
	}
	return out
}

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// writeBAIFigures writes the results file's figures section: each figure with
// its caption; when some DP-MASE point's runs ended in two epochs, what makes
// the curves jump — DP-MASE's epochs — once, and under each DP-MASE figure
// its points whose runs split.
func writeBAIFigures(b *strings.Builder, o Options, grid []baiSeries, runs []Session) {
	splits := epochSplits(grid, runs, o.Agents)
	b.WriteString("\n## Figures\n\n")
	fmt.Fprintf(b, "Each figure is written as PNG, SVG and PDF (`bai_problem%d_NAME.{png,svg,pdf}`). ", o.Problem)
	b.WriteString("The sample complexity counts global steps — interactions of all agents together — until one arm is left; ")
	b.WriteString("both axes are logarithmic; each line joins the means over the runs, and the shaded band around it is the ")
	b.WriteString("mean's 95% Student-t interval (cut at a tenth of the mean where it would reach 0, which a log axis cannot show).\n")
	if len(splits) > 0 {
		b.WriteString("\n" + epochExplanation + "\n")
	}
	for _, fig := range baiFigures() {
		var names []string
		dpmase := false
		for _, s := range grid {
			if contains(s.Figures, fig.Name) {
				names = append(names, s.Name)
				dpmase = dpmase || s.Algorithm == bai.AlgDPMASE
			}
		}
		file := fmt.Sprintf("bai_problem%d_%s", o.Problem, fig.Name)
		fmt.Fprintf(b, "\n### %s\n\n![%s](%s.png)\n\n", fig.Title, fig.Title, file)
		fmt.Fprintf(b, "*%s, Problem %d, %d runs per point:* %s. Files: [PNG](%s.png), [SVG](%s.svg), [PDF](%s.pdf).\n",
			fig.Title, o.Problem, o.Runs, strings.Join(names, ", "), file, file, file)
		if dpmase {
			writeEpochCaption(b, fig.Name, splits)
		}
	}
}

// epochExplanation says why DP-MASE's curves jump; the results file gives it
// once, above the figures, when some point's runs ended in two epochs.
const epochExplanation = "**Why DP-MASE's curves jump.** A DP-MASE agent eliminates arms only at the end of an epoch, and epoch e " +
	"lasts R(e) = max(32 log(8|K|e²/β)·4^e, 8 log(4|K|e²/β)·2^e/ε) rounds: each epoch is 2–4 times as long as the one before " +
	"(×4 where the first term rules, ×2 where ε's does). A run therefore ends at one of a few levels of sample complexity — " +
	"the end of the epoch in which more than M = ⌈log δ / log β⌉ agents have voted each arm but the best out — and needs " +
	"about 2–4 times the samples when it needs one epoch more. Where a gap between arms sits near the elimination threshold " +
	"2(h(e) + c(e)) of one epoch (Problem 2's closest gap is 0.16 after clamping), some runs' noise lets enough agents eliminate " +
	"in that epoch and the others' does not: those runs end one epoch later. The mean then lies between the two levels, " +
	"its interval is wide, and the curve jumps between neighbouring N — with more agents it gets likelier that more than M " +
	"of them eliminate early, since M does not grow with N, so a curve can even fall as N grows. Each ε and β has its own " +
	"epoch boundaries, and which boundary a run reaches is up to the noise, so at one N a series can end above or below " +
	"another whatever their ε or β: where the claims on the orderings in ε and β or on the growth with N fail at some N, " +
	"this is why, not scatter around one level. Under each DP-MASE figure: its points whose runs ended in two epochs, " +
	"with the steps per agent (sample complexity / N; under the uniform distribution one epoch ends at about the same " +
	"steps per agent at every N)."

// writeEpochCaption ends the caption of DP-MASE figure fig: its points whose
// runs ended in two epochs, or that it has none.
func writeEpochCaption(b *strings.Builder, fig string, splits []epochSplit) {
	var here []epochSplit
	for _, sp := range splits {
		if contains(sp.Figures, fig) {
			here = append(here, sp)
		}
	}
	if len(here) == 0 {
		b.WriteString("\nAt every point of this figure, all of DP-MASE's runs ended in the same epoch: its curves have no jumps here.\n")
		return
	}
	b.WriteString("\nDP-MASE's jumps here are its epochs (see *Why DP-MASE's curves jump* above); these points' runs ended an epoch apart:\n\n")
	for _, sp := range here {
		fmt.Fprintf(b, "- %s, N = %d: %s at ≈ %.0f steps (%.0f per agent), %s at ≈ %.0f (%.0f per agent), ×%.1f",
			sp.Series, sp.Agents, plural(len(sp.Early), "run"), meanOf(sp.Early), sp.EarlyPerAgent,
			plural(len(sp.Late), "run"), meanOf(sp.Late), sp.LatePerAgent, meanOf(sp.Late)/meanOf(sp.Early))
		if sp.Unbalanced {
			b.WriteString(" (unbalanced P_N: the agents' shares of the steps differ)")
		}
		b.WriteString("\n")
	}
}

// plural is "1 run", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
