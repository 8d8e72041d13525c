package experiment

import (
	"fmt"
	"image/color"
	"math"
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

// plotPFCB draws EXP1's regret curves, EXP2's FRR against ε and EXP3's
// per-agent regret against n.
func plotPFCB(o PFCBOptions, runs []PFCBRun, eps []float64, frr, perN map[string][]float64) ([]string, error) {
	var files []string
	for _, fam := range []string{"uniform", "normal"} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("EXP1: cumulative regret per agent (n = 10, m = 30, %s instances)", fam)
		p.X.Label.Text = "round t"
		p.Y.Label.Text = "regret per agent"
		p.Legend.Top, p.Legend.Left = true, true
		for i, s := range []struct {
			name, alg string
			eps       float64
		}{{"FCB", "fcb", 0}, {"P-FCB (ε = 1)", "pfcb", 1}, {"Non-federated", "non_federated", 0}} {
			var sum []float64
			var every int64
			count := 0
			for _, r := range runs {
				if r.Family != fam || r.Algorithm != s.alg || r.Agents != 10 || (s.alg == "pfcb" && r.Epsilon != s.eps) {
					continue
				}
				if sum == nil {
					sum = make([]float64, len(r.Curve))
					every = r.CurveEvery
				}
				for j, v := range r.Curve {
					if j < len(sum) {
						sum[j] += v
					}
				}
				count++
			}
			pts := make(plotter.XYs, len(sum))
			for j := range sum {
				pts[j] = plotter.XY{X: float64(int64(j+1) * every), Y: sum[j] / float64(max(1, count))}
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			line.Color = plotutil.Color(i)
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(s.name, line)
		}
		p.Add(plotter.NewGrid())
		path := filepath.Join(o.Out, fmt.Sprintf("pfcb_exp1_%s.png", fam))
		if err := p.Save(7*vg.Inch, 5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("drawing %s: %w", path, err)
		}
		files = append(files, path)
	}
	for _, fig := range []struct {
		file, title, x, y string
		xs                []float64
		ys                map[string][]float64
		ref               float64
	}{
		{"pfcb_exp2_frr.png", "EXP2: FRR of P-FCB against ε (n = 10, m = 30)", "privacy budget ε", "FRR", eps, frr, 1},
		{"pfcb_exp3_agents.png", "EXP3: regret per agent against n (P-FCB, ε = 1, m = 30)", "agents n", "regret per agent", intsToFloats(o.Agents), perN, math.NaN()},
	} {
		p := plot.New()
		p.Title.Text = fig.title
		p.X.Label.Text = fig.x
		p.Y.Label.Text = fig.y
		p.Legend.Top = true
		for i, fam := range []string{"uniform", "normal"} {
			pts := make(plotter.XYs, len(fig.xs))
			for j, x := range fig.xs {
				pts[j] = plotter.XY{X: x, Y: fig.ys[fam][j]}
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color, points.Shape = plotutil.Color(i), plotutil.Color(i), plotutil.Shape(i)
			p.Add(line, points)
			p.Legend.Add(fam+" instances", line, points)
		}
		if !math.IsNaN(fig.ref) {
			ref, _ := plotter.NewLine(plotter.XYs{{X: fig.xs[0], Y: fig.ref}, {X: fig.xs[len(fig.xs)-1], Y: fig.ref}})
			ref.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
			p.Add(ref)
		}
		p.Add(plotter.NewGrid())
		path := filepath.Join(o.Out, fig.file)
		if err := p.Save(7*vg.Inch, 5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("drawing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
