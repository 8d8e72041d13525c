package mpccb

import (
	"fmt"
	"math"
	"slices"

	"github.com/bandit-node/bandit-node/experiment"
)

// splitRuns returns the reward runs, and for each timing point its fastest
// repeat, with every repeat's ms per step in Timings.
func splitRuns(runs []Session) (reward, timing []Session) {
	at := map[[2]int]int{}
	for _, r := range runs {
		if r.Kind == "reward" {
			reward = append(reward, r)
			continue
		}
		k := [2]int{r.Arms, r.Parties}
		i, ok := at[k]
		if !ok {
			at[k] = len(timing)
			r.Timings = []float64{r.MsPerStep}
			timing = append(timing, r)
			continue
		}
		all := append(timing[i].Timings, r.MsPerStep)
		if r.MsPerStep < timing[i].MsPerStep {
			timing[i] = r
		}
		timing[i].Timings = all
	}
	return reward, timing
}

// mpccbCurve is Figure 1's curve for one ε: mean and spread over runs at
// every checkpoint.
type mpccbCurve struct {
	Epsilon            float64
	Runs               int
	Steps              []int64
	Private, Reference []experiment.Summary
	// Final rewards per run, and the largest |private − reference| of a run.
	FinalPrivate, FinalReference experiment.Summary
	MaxGap                       float64
	MinAgreement                 float64
}

func rewardCurves(o Options, reward []Session) []mpccbCurve {
	var out []mpccbCurve
	for _, e := range o.rewardEpsilons() {
		var rs []Session
		for _, r := range reward {
			if r.Epsilon == e {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		c := mpccbCurve{Epsilon: e, Runs: len(rs), Steps: rs[0].CurveSteps, MinAgreement: 1}
		for k := range c.Steps {
			var p, q []float64
			for _, r := range rs {
				p = append(p, r.Curve[k])
				q = append(q, r.ReferenceCurve[k])
			}
			c.Private = append(c.Private, experiment.Summarize(p))
			c.Reference = append(c.Reference, experiment.Summarize(q))
		}
		var fp, fr []float64
		for _, r := range rs {
			fp, fr = append(fp, r.AverageReward), append(fr, r.ReferenceAverageReward)
			c.MaxGap = max(c.MaxGap, math.Abs(r.AverageReward-r.ReferenceAverageReward))
			c.MinAgreement = min(c.MinAgreement, r.ArmAgreement)
		}
		c.FinalPrivate, c.FinalReference = experiment.Summarize(fp), experiment.Summarize(fr)
		out = append(out, c)
	}
	return out
}

// etaSeries is Figure 2's series for one size T: a point per ε, and the
// greedy reference (ε = 0, η = ∞) last.
type etaSeries struct {
	T      int64
	Points []etaPoint
}

type etaPoint struct {
	Epsilon            float64 // 0: η = ∞, the greedy reference alone
	Private, Reference experiment.Summary
}

// rewardAgainstEta reads each ε's average reward after T steps off the
// curves, T = the checkpoints nearest Steps/10 and Steps/2, and Steps: a
// shorter sweep is a prefix of the longer one (same images, same dealer
// samples), so its reward is the curve's value at T.
func rewardAgainstEta(rep *Report, reward []Session) []etaSeries {
	if len(reward) == 0 {
		return nil
	}
	steps := reward[0].CurveSteps
	n := len(steps)
	idx := []int{max(0, n/10-1), max(0, n/2-1), n - 1}
	var out []etaSeries
	for _, k := range slices.Compact(idx) {
		s := etaSeries{T: steps[k]}
		var eps []float64
		for _, r := range reward {
			if !slices.Contains(eps, r.Epsilon) && slices.Contains(rep.Options.Epsilons, r.Epsilon) {
				eps = append(eps, r.Epsilon)
			}
		}
		slices.Sort(eps)
		for _, e := range eps {
			var p, q []float64
			for _, r := range reward {
				if r.Epsilon == e {
					p, q = append(p, r.Curve[k]), append(q, r.ReferenceCurve[k])
				}
			}
			s.Points = append(s.Points, etaPoint{Epsilon: e, Private: experiment.Summarize(p), Reference: experiment.Summarize(q)})
		}
		var g []float64
		for _, c := range rep.Greedy {
			g = append(g, c[k])
		}
		s.Points = append(s.Points, etaPoint{Epsilon: 0, Reference: experiment.Summarize(g)})
		out = append(out, s)
	}
	return out
}

// timingAt returns the timing run at (arms, parties).
func timingAt(timing []Session, arms, parties int) (Session, bool) {
	for _, r := range timing {
		if r.Arms == arms && r.Parties == parties {
			return r, true
		}
	}
	return Session{}, false
}

// pointReward is the private reward of a point, or the reference's at η = ∞.
func pointReward(pt etaPoint) float64 {
	if pt.Epsilon == 0 {
		return pt.Reference.Mean
	}
	return pt.Private.Mean
}

// pointSummary is the runs' summary behind pointReward.
func pointSummary(pt etaPoint) experiment.Summary {
	if pt.Epsilon == 0 {
		return pt.Reference
	}
	return pt.Private
}

// etaText formats η, ∞ included.
func etaText(eps float64) string {
	if eps == 0 {
		return "∞"
	}
	return fmt.Sprintf("%.2f", etaOf(eps))
}

func etaOf(eps float64) float64 {
	if eps == 0 {
		return math.Inf(1)
	}
	return math.Log(10 / eps)
}
