package mpccb

import (
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/internal/figuretest"
)

// TestFiguresBands draws the figures from made-up summaries with one run and
// with three per point: every file parses, and the figures that have runs to
// shade have their 95% bands with three runs and none with one.
func TestFiguresBands(t *testing.T) {
	figuretest.Bands(t, drawMPCCB, map[string]bool{
		"fig1_reward": true, "fig2_reward_vs_eta": true,
	})
}

func drawMPCCB(dir string, runs int) ([]string, error) {
	o := Options{Out: dir, Runs: runs, CurveEpsilons: []float64{0.1, 0.2}, Arms: []int{10, 20}, Parties: []int{2},
		ScaleParties: []int{2, 3}, ScaleArms: []int{10}}
	summary := func(m float64) experiment.Summary {
		if runs == 1 {
			return experiment.Summary{N: 1, Mean: m, Low: m, High: m}
		}
		return experiment.Summary{N: runs, Mean: m, Low: m - 0.05, High: m + 0.05, StdDev: 0.04}
	}
	var curves []mpccbCurve
	for _, e := range o.CurveEpsilons {
		c := mpccbCurve{Epsilon: e, Runs: runs, Steps: []int64{100, 200, 300}}
		for k := range c.Steps {
			c.Private = append(c.Private, summary(0.3+0.1*float64(k)))
			c.Reference = append(c.Reference, summary(0.3+0.1*float64(k)))
		}
		curves = append(curves, c)
	}
	fig2 := []etaSeries{{T: 300, Points: []etaPoint{
		{Epsilon: 0, Reference: summary(0.7)},
		{Epsilon: 0.1, Private: summary(0.5)},
		{Epsilon: 0.2, Private: summary(0.6)},
	}}}
	var timing []Session
	for _, a := range []int{10, 20} {
		var r Session
		r.Kind, r.Arms, r.Parties, r.MsPerStep = "timing", a, 2, float64(a)
		timing = append(timing, r)
	}
	var r Session
	r.Kind, r.Arms, r.Parties, r.MsPerStep = "timing", 10, 3, 15
	timing = append(timing, r)
	return plotMPCCB(o, curves, fig2, timing)
}
