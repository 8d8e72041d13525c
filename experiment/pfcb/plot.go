package pfcb

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// plotPFCB draws EXP1's regret curves, EXP2's FRR against ε and EXP3's
// per-agent regret against n. EXP1 and EXP3 shade the 95% interval of the
// mean over every run of the point (instances × runs); EXP2's FRR is a ratio
// of two means, with no sample of its own to draw an interval from (the
// results file pairs it by instance instead).
func plotPFCB(o Options, runs []Session, eps []float64, frr, perN map[string][]float64) ([]string, error) {
	var files []string
	for _, fam := range []string{"uniform", "normal"} {
		p := experiment.NewFigure("round", "cumulative_regret_per_agent")
		p.Title.Text = fmt.Sprintf("EXP1: cumulative regret per agent (n = 10, m = 30, %s instances)", fam)
		p.X.Label.Text = "round t"
		p.Y.Label.Text = "cumulative regret per agent (revenue units)"
		most := 0
		for i, s := range []struct {
			name, alg string
			eps       float64
		}{{"FCB", pfcb.AlgFCB, 0}, {"P-FCB (ε = 1)", pfcb.AlgPFCB, 1}, {"Non-federated", pfcb.AlgNonFederated, 0}} {
			var curves [][]float64
			var every int64
			for _, r := range runs {
				if r.Family != fam || r.Algorithm != s.alg || r.Agents != 10 || (s.alg == pfcb.AlgPFCB && r.Epsilon != s.eps) {
					continue
				}
				if curves == nil {
					every = r.CurveEvery
				}
				curves = append(curves, r.Curve)
			}
			pts, lo, hi := curveSummary(curves, every)
			most = max(most, len(curves))
			thumbs, err := p.AddSeries(s.name, pts, lo, hi, len(curves) > 1, plotutil.Color(i), nil)
			if err != nil {
				return nil, err
			}
			p.Legend.Add(s.name, thumbs...)
		}
		experiment.AddBandKey(p.Plot, most)
		p.Add(plotter.NewGrid())
		f, err := p.Save(filepath.Join(o.Out, fmt.Sprintf("pfcb_exp1_%s", fam)))
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}

	p := experiment.NewFigure("epsilon", "frr")
	p.Title.Text = "EXP2: FRR of P-FCB against ε (n = 10, m = 30)"
	p.X.Label.Text = "privacy budget ε (total over the session)"
	p.Y.Label.Text = "FRR = regret(P-FCB) / regret(Non-federated)"
	for i, fam := range []string{"uniform", "normal"} {
		pts := make(plotter.XYs, len(eps))
		for j, x := range eps {
			pts[j] = plotter.XY{X: x, Y: frr[fam][j]}
		}
		thumbs, err := p.AddSeries(fam+" instances", pts, nil, nil, false, plotutil.Color(i), plotutil.Shape(i))
		if err != nil {
			return nil, err
		}
		p.Legend.Add(fam+" instances", thumbs...)
	}
	if len(eps) > 0 {
		ref, err := plotter.NewLine(plotter.XYs{{X: eps[0], Y: 1}, {X: eps[len(eps)-1], Y: 1}})
		if err != nil {
			return nil, err
		}
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(ref)
		p.Legend.Add("FRR = 1 (no gain)", ref)
	}
	p.Add(plotter.NewGrid())
	f, err := p.Save(filepath.Join(o.Out, "pfcb_exp2_frr"))
	if err != nil {
		return nil, err
	}
	files = append(files, f...)

	p = experiment.NewFigure("agents", "regret_per_agent")
	p.Title.Text = "EXP3: regret per agent against n (P-FCB, ε = 1, m = 30)"
	p.X.Label.Text = "agents n"
	p.Y.Label.Text = "regret per agent at T (revenue units)"
	most := 0
	ns := experiment.IntsToFloats(o.Agents)
	for i, fam := range []string{"uniform", "normal"} {
		pts := make(plotter.XYs, len(o.Agents))
		lo, hi := make([]float64, len(o.Agents)), make([]float64, len(o.Agents))
		for j, n := range o.Agents {
			s := pfcbMean(runs, func(r Session) bool {
				return r.Family == fam && r.Algorithm == pfcb.AlgPFCB && r.Epsilon == 1 && r.Agents == n
			})
			// perN holds the same means; the runs give their intervals.
			pts[j] = plotter.XY{X: ns[j], Y: perN[fam][j]}
			lo[j], hi[j] = s.Low, s.High
			most = max(most, s.N)
		}
		thumbs, err := p.AddSeries(fam+" instances", pts, lo, hi, most > 1, plotutil.Color(i), plotutil.Shape(i))
		if err != nil {
			return nil, err
		}
		p.Legend.Add(fam+" instances", thumbs...)
	}
	experiment.AddBandKey(p.Plot, most)
	p.Add(plotter.NewGrid())
	f, err = p.Save(filepath.Join(o.Out, "pfcb_exp3_agents"))
	if err != nil {
		return nil, err
	}
	return append(files, f...), nil
}

// curveSummary is the mean of curves (each a value every `every` rounds) at
// each recorded round, with its 95% interval. Curves shorter than the first
// count only where they have values.
func curveSummary(curves [][]float64, every int64) (pts plotter.XYs, lo, hi []float64) {
	if len(curves) == 0 {
		return nil, nil, nil
	}
	n := len(curves[0])
	pts = make(plotter.XYs, n)
	lo, hi = make([]float64, n), make([]float64, n)
	for j := range n {
		var xs []float64
		for _, c := range curves {
			if j < len(c) {
				xs = append(xs, c[j])
			}
		}
		s := experiment.Summarize(xs)
		pts[j] = plotter.XY{X: float64(int64(j+1) * every), Y: s.Mean}
		lo[j], hi[j] = s.Low, s.High
	}
	return pts, lo, hi
}
