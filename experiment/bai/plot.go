package bai

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/bandit-node/bandit-node/experiment"
)

// plotBAI draws one figure per paper figure: mean sample complexity against
// N, log–log, with the 95% interval over the runs as a shaded band when a
// point has more than one run.
func plotBAI(o Options, grid []baiSeries, sum map[string]map[int]baiPoint) ([]string, error) {
	var files []string
	for _, fig := range baiFigures() {
		p := experiment.NewFigure("agents", "sample_complexity")
		p.Title.Text = fmt.Sprintf("%s (Problem %d)", fig.Title, o.Problem)
		p.X.Label.Text = "agents N"
		p.Y.Label.Text = "sample complexity (global steps, all agents)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = experiment.AgentTicks(o.Agents)
		i, runs := 0, 0
		for _, s := range grid {
			if !contains(s.Figures, fig.Name) {
				continue
			}
			pts := make(plotter.XYs, len(o.Agents))
			lo, hi := make([]float64, len(o.Agents)), make([]float64, len(o.Agents))
			low := make([]float64, len(o.Agents)) // the interval as it is, for the data
			banded := false
			for j, n := range o.Agents {
				pt := sum[s.Name][n]
				pts[j] = plotter.XY{X: float64(n), Y: pt.Mean}
				// A log axis has no room for an interval reaching 0 or
				// below (two runs far apart): such a band is cut at a
				// tenth of the mean.
				lo[j], hi[j], low[j] = max(pt.Low, pt.Mean/10), pt.High, pt.Low
				banded = banded || pt.N > 1
				runs = max(runs, pt.N)
			}
			c := plotutil.Color(i)
			thumbs, err := experiment.AddSeries(p.Plot, pts, lo, hi, banded, c, plotutil.Shape(i))
			if err != nil {
				return nil, err
			}
			p.Record(s.Name, pts, low, hi)
			p.Legend.Add(s.Name, thumbs...)
			i++
		}
		experiment.AddBandKey(p.Plot, runs)
		p.Add(plotter.NewGrid())
		f, err := p.Save(filepath.Join(o.Out, fmt.Sprintf("bai_problem%d_%s", o.Problem, fig.Name)))
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	return files, nil
}

// baiFigures are the BAI paper's figures, in the order they are drawn.
func baiFigures() []struct{ Name, Title string } {
	return []struct{ Name, Title string }{
		{"fig1_dp_mase", "Figure 1 (left): DP-MASE"},
		{"fig1_corrupted", "Figure 1 (right): Corrupted Elimination"},
		{"fig5_beta", "Figure 5: DP-MASE, ε = 0.5, local accuracy β"},
		{"fig6_dp_mase", "Figure 6 (left): DP-MASE ε = 0.1, agent distribution"},
		{"fig6_corrupted", "Figure 6 (right): Corrupted ξ = 0.05, agent distribution"},
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
