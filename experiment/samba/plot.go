package samba

import (
	"fmt"
	"path/filepath"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol/samba"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotSAMBA draws the figures: reward and time against N at the largest K
// (the paper's Figure 8(c) and (a)), time against K at N (8(b)), and the
// roles' shares of the busy time (8(d)). SAMBA is solid, the standard
// algorithm dashed, as in the paper.
func plotSAMBA(o Options, dataset string, pts map[sambaKey]sambaPoint) ([]string, error) {
	ks, n := o.Ks, o.Budget
	kmax := ks[len(ks)-1]
	budgets := sambaBudgets(n, kmax, kmax)
	dashed := []vg.Length{vg.Points(4), vg.Points(3)}
	var files []string
	save := func(p *experiment.Figure, name string) error {
		p.Add(plotter.NewGrid())
		written, err := p.Save(filepath.Join(o.Out, name))
		if err != nil {
			return err
		}
		files = append(files, written...)
		return nil
	}
	// series draws one algorithm's line with points and 95 % error bars,
	// and, if std is set, the standard algorithm's dashed line. On a log
	// axis (logY) a bar's lower end stops above zero.
	series := func(p *experiment.Figure, i int, alg string, xs []float64, sec, std func(int) experiment.Summary, logY bool) error {
		pts := make(plotter.XYs, len(xs))
		errs := make(plotter.YErrors, len(xs))
		lows, highs := make([]float64, len(xs)), make([]float64, len(xs))
		for j, x := range xs {
			s := sec(j)
			pts[j] = plotter.XY{X: x, Y: s.Mean}
			lows[j], highs[j] = s.Low, s.High
			low := s.Mean - s.Low
			if logY {
				low = min(low, 0.9*s.Mean)
			}
			errs[j] = struct{ Low, High float64 }{low, s.High - s.Mean}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := plotutil.Color(i)
		line.Color, points.Color, points.Shape = c, c, plotutil.Shape(i)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return err
		}
		eb.Color = c
		p.Add(line, points, eb)
		p.Legend.Add(alg, line, points)
		p.Record("SAMBA "+alg, pts, lows, highs)
		if std != nil {
			sp := make(plotter.XYs, len(xs))
			slo, shi := make([]float64, len(xs)), make([]float64, len(xs))
			for j, x := range xs {
				sj := std(j)
				sp[j] = plotter.XY{X: x, Y: sj.Mean}
				slo[j], shi[j] = sj.Low, sj.High
			}
			p.Record("standard "+alg, sp, slo, shi)
			sl, err := plotter.NewLine(sp)
			if err != nil {
				return err
			}
			sl.Color, sl.Dashes = c, dashed
			p.Add(sl)
		}
		return nil
	}
	xsN := make([]float64, len(budgets))
	for j, b := range budgets {
		xsN[j] = float64(b)
	}

	p := experiment.NewFigure("budget", "cumulative_reward")
	p.Title.Text = fmt.Sprintf("Cumulative reward, K = %d (%s; SAMBA points, standard dashed)", kmax, dataset)
	p.X.Label.Text = "budget N (pulls)"
	p.Y.Label.Text = "cumulative reward (successes)"
	p.Legend.Top, p.Legend.Left = true, true
	for i, alg := range sambaAlgorithms() {
		if err := series(p, i, alg, xsN,
			func(j int) experiment.Summary { return pts[sambaKey{alg, kmax, budgets[j]}].Reward },
			func(j int) experiment.Summary { return pts[sambaKey{alg, kmax, budgets[j]}].StandardReward }, false); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	if err := save(p, "samba_reward.png"); err != nil {
		return nil, err
	}

	for _, fig := range []struct {
		file, title, x, xName string
		xs                    []float64
		key                   func(alg string, j int) sambaKey
	}{
		{"samba_time_n.png", fmt.Sprintf("Time against N, K = %d (SAMBA solid, standard dashed)", kmax), "budget N (pulls)", "budget", xsN,
			func(alg string, j int) sambaKey { return sambaKey{alg, kmax, budgets[j]} }},
		{"samba_time_k.png", fmt.Sprintf("Time against K, N = %d (SAMBA solid, standard dashed)", n), "arms K (data owners)", "arms", experiment.IntsToFloats(ks),
			func(alg string, j int) sambaKey { return sambaKey{alg, ks[j], n} }},
	} {
		p := experiment.NewFigure(fig.xName, "cpu_seconds")
		p.Title.Text = fig.title
		p.X.Label.Text = fig.x
		p.Y.Label.Text = "time (s, CPU, log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = true, true
		for i, alg := range sambaAlgorithms() {
			if err := series(p, i, alg, fig.xs,
				func(j int) experiment.Summary { return pts[fig.key(alg, j)].Secure },
				func(j int) experiment.Summary { return pts[fig.key(alg, j)].Standard }, true); err != nil {
				return nil, err
			}
		}
		if err := save(p, fig.file); err != nil {
			return nil, err
		}
	}

	// The roles' shares, averaged over the algorithms, one bar per K.
	p = experiment.NewFigure("role", "busy_share_percent")
	p.Title.Text = fmt.Sprintf("Share of the busy time by role, N = %d (mean over the algorithms)", n)
	p.Y.Label.Text = "share of all parties' busy time (%)"
	labels := []string{"comp", "controller", "one data owner", "data customer"}
	roles := []struct {
		role     string
		perOwner bool
	}{{samba.RoleComp, false}, {samba.RoleController, false}, {samba.RoleOwner, true}, {samba.RoleCustomer, false}}
	width := vg.Points(60 / float64(len(ks)))
	for i, k := range ks {
		vals := make(plotter.Values, len(roles))
		for j, r := range roles {
			for _, alg := range sambaAlgorithms() {
				vals[j] += 100 * pts[sambaKey{alg, k, n}].share(r.role, r.perOwner) / float64(len(sambaAlgorithms()))
			}
		}
		for j, v := range vals {
			p.RecordAt(fmt.Sprintf("K = %d", k), labels[j], v)
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(len(ks)-1)/2) * width
		p.Add(bars)
		p.Legend.Add(fmt.Sprintf("K = %d", k), bars)
	}
	p.Legend.Top = true
	p.NominalX(labels...)
	p.Y.Min = 0

	if err := save(p, "samba_roles.png"); err != nil {
		return nil, err
	}
	return files, nil
}
