package mpccb

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"github.com/bandit-node/bandit-node/experiment"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotMPCCB draws Figures 1–4 of the contextual-bandit experiment.
func plotMPCCB(o Options, curves []mpccbCurve, fig2 []etaSeries, timing []Session) ([]string, error) {
	var files []string
	save := func(p *experiment.Figure, name string) error {
		p.Add(plotter.NewGrid())
		f, err := p.Save(filepath.Join(o.Out, name))
		files = append(files, f...)
		return err
	}
	dashed := []vg.Length{vg.Points(5), vg.Points(3)}

	// Figure 1: the reward curves, private (solid, its 95% interval over the
	// runs shaded) and reference (dashed).
	p := experiment.NewFigure("step", "average_reward")
	p.Title.Text = fmt.Sprintf("Figure 1: average reward during training (Fashion-MNIST, P = 2, %d runs)", o.Runs)
	p.X.Label.Text = "step t (one image, all parties)"
	p.Y.Label.Text = "average reward up to t (fraction correct)"
	i := 0
	runs := 0
	for _, c := range curves {
		if !slices.Contains(o.CurveEpsilons, c.Epsilon) {
			continue
		}
		col := plotutil.Color(i)
		mean, ref := make(plotter.XYs, len(c.Steps)), make(plotter.XYs, len(c.Steps))
		lo, hi := make([]float64, len(c.Steps)), make([]float64, len(c.Steps))
		for k, t := range c.Steps {
			mean[k] = plotter.XY{X: float64(t), Y: c.Private[k].Mean}
			ref[k] = plotter.XY{X: float64(t), Y: c.Reference[k].Mean}
			lo[k], hi[k] = rewardBounds(c.Private[k])
		}
		rlo, rhi := make([]float64, len(c.Steps)), make([]float64, len(c.Steps))
		for k := range c.Steps {
			rlo[k], rhi[k] = rewardBounds(c.Reference[k])
		}
		thumbs, err := p.AddSeries(fmt.Sprintf("ε = %g private", c.Epsilon), mean, lo, hi, c.Runs > 1, col, nil)
		if err != nil {
			return nil, err
		}
		p.Record(fmt.Sprintf("ε = %g reference", c.Epsilon), ref, rlo, rhi)
		runs = max(runs, c.Runs)
		rl, err := plotter.NewLine(ref)
		if err != nil {
			return nil, err
		}
		// Darker, on top: the two curves mostly coincide.
		rl.Color, rl.Width, rl.Dashes = darker(col), vg.Points(1), dashed
		p.Add(rl)
		p.Legend.Add(fmt.Sprintf("ε = %g private", c.Epsilon), thumbs...)
		p.Legend.Add(fmt.Sprintf("ε = %g reference", c.Epsilon), rl)
		i++
	}
	experiment.AddBandKey(p.Plot, runs)
	if err := save(p, "fig1_reward"); err != nil {
		return nil, err
	}

	// Figure 2: final reward against η, one series per T; the greedy
	// reference (η = ∞) as a dashed level.
	p = experiment.NewFigure("eta", "average_reward")
	p.Title.Text = fmt.Sprintf("Figure 2: average reward against η = log(|A|/ε) (%d runs)", o.Runs)
	p.X.Label.Text = "η = log(|A|/ε)   (dashed: η = ∞, greedy plaintext reference)"
	p.Y.Label.Text = "average reward after T steps (fraction correct)"
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range fig2 {
		for _, pt := range s.Points {
			if pt.Epsilon > 0 {
				lo, hi = min(lo, etaOf(pt.Epsilon)), max(hi, etaOf(pt.Epsilon))
			}
		}
	}
	runs = 0
	for i, s := range fig2 {
		col := plotutil.Color(i)
		var greedy float64
		var at []etaPoint
		for _, pt := range s.Points {
			if pt.Epsilon == 0 {
				greedy = pt.Reference.Mean
				glo, ghi := rewardBounds(pt.Reference)
				p.Record(fmt.Sprintf("T = %d, η = ∞ (greedy reference)", s.T), plotter.XYs{{X: math.Inf(1), Y: greedy}}, []float64{glo}, []float64{ghi})
				continue
			}
			at = append(at, pt)
		}
		// By η, which falls as ε grows.
		slices.SortFunc(at, func(a, b etaPoint) int { return cmp.Compare(etaOf(a.Epsilon), etaOf(b.Epsilon)) })
		pts := make(plotter.XYs, len(at))
		bandLo, bandHi := make([]float64, len(at)), make([]float64, len(at))
		banded := false
		for k, pt := range at {
			pts[k] = plotter.XY{X: etaOf(pt.Epsilon), Y: pt.Private.Mean}
			bandLo[k], bandHi[k] = rewardBounds(pt.Private)
			banded = banded || pt.Private.N > 1
			runs = max(runs, pt.Private.N)
		}
		thumbs, err := p.AddSeries(fmt.Sprintf("T = %d", s.T), pts, bandLo, bandHi, banded, col, plotutil.Shape(i))
		if err != nil {
			return nil, err
		}
		g, err := plotter.NewLine(plotter.XYs{{X: lo - 0.2, Y: greedy}, {X: hi + 0.2, Y: greedy}})
		if err != nil {
			return nil, err
		}
		g.Color, g.Dashes = col, dashed
		p.Add(g)
		p.Legend.Add(fmt.Sprintf("T = %d", s.T), thumbs...)
	}
	if len(fig2) > 0 {
		// A key only: each T's level is dashed in its colour.
		key := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1), Dashes: dashed}}
		p.Legend.Add("η = ∞ (ε = 0, plaintext), dashed", key)
	}
	experiment.AddBandKey(p.Plot, runs)
	if err := save(p, "fig2_reward_vs_eta"); err != nil {
		return nil, err
	}

	// Figures 3 and 4: time per step, log–log, with a quadratic guide.
	for _, fig := range []struct {
		file, title, x, sym, xName string
		lines, xs                  []int
		lineName                   string
		at                         func(line, x int) (Session, bool)
	}{
		{"fig3_time_vs_arms", "Figure 3: time per step against |A| (synthetic data)", "arms |A|", "|A|", "arms", o.Parties, o.Arms, "P = %d",
			func(line, x int) (Session, bool) { return timingAt(timing, x, line) }},
		{"fig4_time_vs_parties", "Figure 4: time per step against P (synthetic data)", "parties P", "P", "parties", o.ScaleArms, o.ScaleParties, "|A| = %d",
			func(line, x int) (Session, bool) { return timingAt(timing, line, x) }},
	} {
		p := experiment.NewFigure(fig.xName, "ms_per_step")
		p.Title.Text = fig.title
		p.X.Label.Text = fig.x
		p.Y.Label.Text = "time per step (ms, all roles, fastest repeat)"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker = experiment.AgentTicks(fig.xs)
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		var guideAt plotter.XY
		for i, l := range fig.lines {
			var pts plotter.XYs
			for _, x := range fig.xs {
				if r, ok := fig.at(l, x); ok && r.MsPerStep > 0 {
					pts = append(pts, plotter.XY{X: float64(x), Y: r.MsPerStep})
				}
			}
			if len(pts) == 0 {
				continue
			}
			if guideAt.X == 0 {
				guideAt = pts[len(pts)-1]
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			col := plotutil.Color(i)
			line.Color, points.Color, points.Shape = col, col, plotutil.Shape(i)
			p.Add(line, points)
			p.Legend.Add(fmt.Sprintf(fig.lineName, l), line, points)
			p.Record(fmt.Sprintf(fig.lineName, l), pts, nil, nil)
		}
		if guideAt.X > 0 && len(fig.xs) > 1 {
			var g plotter.XYs
			for _, x := range fig.xs {
				g = append(g, plotter.XY{X: float64(x), Y: guideAt.Y * math.Pow(float64(x)/guideAt.X, 2)})
			}
			gl, err := plotter.NewLine(g)
			if err != nil {
				return nil, err
			}
			gl.Color, gl.Dashes = color.Gray{Y: 120}, dashed
			p.Add(gl)
			p.Legend.Add("c·"+fig.sym+"² (guide)", gl)
		}
		if err := save(p, fig.file); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// rewardBounds is s's 95% interval cut to [0, 1], where an average reward
// lies: with few runs Student's t makes it far wider than that.
func rewardBounds(s experiment.Summary) (lo, hi float64) {
	return max(s.Low, 0), min(s.High, 1)
}

// darker returns c at half brightness.
func darker(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 9), G: uint8(g >> 9), B: uint8(b >> 9), A: 0xff}
}
