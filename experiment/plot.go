package experiment

import (
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotBAI draws one PNG per figure: mean sample complexity against N with
// 95% error bars, log scale.
func plotBAI(o BAIOptions, grid []baiSeries, sum map[string]map[int]baiPoint) ([]string, error) {
	titles := map[string]string{
		"fig1_dp_mase":   "Figure 1 (left): DP-MASE",
		"fig1_corrupted": "Figure 1 (right): Corrupted Elimination",
		"fig5_beta":      "Figure 5: DP-MASE, ε = 0.5, local accuracy β",
		"fig6_dp_mase":   "Figure 6 (left): DP-MASE ε = 0.1, agent distribution",
		"fig6_corrupted": "Figure 6 (right): Corrupted ξ = 0.05, agent distribution",
	}
	var files []string
	for _, fig := range []string{"fig1_dp_mase", "fig1_corrupted", "fig5_beta", "fig6_dp_mase", "fig6_corrupted"} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s (Problem %d)", titles[fig], o.Problem)
		p.X.Label.Text = "agents N"
		p.Y.Label.Text = "sample complexity"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = agentTicks(o.Agents)
		p.Legend.Top = true
		p.Legend.Left = true
		i := 0
		for _, s := range grid {
			if !contains(s.Figures, fig) {
				continue
			}
			pts := make(plotter.XYs, len(o.Agents))
			errs := make(plotter.YErrors, len(o.Agents))
			for j, n := range o.Agents {
				pt := sum[s.Name][n]
				pts[j] = plotter.XY{X: float64(n), Y: pt.Mean}
				errs[j] = struct{ Low, High float64 }{pt.Mean - pt.Low, pt.High - pt.Mean}
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			c := plotutil.Color(i)
			line.Color, points.Color = c, c
			points.Shape = plotutil.Shape(i)
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{pts, errs})
			if err != nil {
				return nil, err
			}
			eb.Color = c
			p.Add(line, points, eb)
			p.Legend.Add(s.Name, line, points)
			i++
		}
		p.Add(plotter.NewGrid())
		p.BackgroundColor = color.White
		path := filepath.Join(o.Out, fmt.Sprintf("bai_problem%d_%s.png", o.Problem, fig))
		if err := p.Save(7*vg.Inch, 5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("drawing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

func agentTicks(agents []int) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		var t []plot.Tick
		for _, n := range agents {
			t = append(t, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
		}
		return t
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
