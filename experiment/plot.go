package experiment

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// The size of every figure's plot (title, axes and data area); the legend
// gets a column of its own to the right of it, as wide as its entries.
const (
	figureWidth  = 7 * vg.Inch
	figureHeight = 5 * vg.Inch
	// figureDPI is the PNG's resolution; SVG and PDF are vector.
	figureDPI = 150
	// legendGap separates the legend from the plot and the figure's edge.
	legendGap = 4 * vg.Millimeter
)

// savePlot writes p in the three formats every experiment's figures come in
// — PNG for a quick look, SVG and PDF for papers — as path.png, path.svg and
// path.pdf (an extension .png, .svg or .pdf already on path is replaced), and
// returns the three paths. The legend is drawn beside the plot, never over
// the data, whatever p.Legend's Top and Left say; the background is white.
// Every figure of the experiments goes through here.
func savePlot(p *plot.Plot, path string) ([]string, error) {
	switch filepath.Ext(path) {
	case ".png", ".svg", ".pdf":
		path = strings.TrimSuffix(path, filepath.Ext(path))
	}
	legend := p.Legend
	legend.Top, legend.Left, legend.XOffs, legend.YOffs = true, true, 0, 0
	if legend.Padding == 0 {
		legend.Padding = vg.Points(3)
	}
	legendWidth := legend.Rectangle(draw.Canvas{}).Size().X
	if legendWidth > 0 {
		legendWidth += 2 * legendGap
	}
	w, h := figureWidth+legendWidth, figureHeight
	var files []string
	for _, f := range []struct {
		ext    string
		canvas func() vg.CanvasWriterTo
	}{
		{".png", func() vg.CanvasWriterTo {
			return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(figureDPI))}
		}},
		{".svg", func() vg.CanvasWriterTo { return vgsvg.New(w, h) }},
		{".pdf", func() vg.CanvasWriterTo { return vgpdf.New(w, h) }},
	} {
		c := f.canvas()
		drawFigure(draw.New(c), p, legend, legendWidth)
		file := path + f.ext
		if err := writeFigure(file, c); err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return files, nil
}

// drawFigure draws p on c without its legend, on the left, and legend in a
// column legendWidth wide on the right, from the top of the data area down.
//
// It draws the Y axis's label itself, centred on the data area: gonum/plot
// reserves room for it as if it were centred on the arithmetic middle of the
// axis's range, which on a log axis sits near the top, and a label longer
// than the space above that middle pushes the data area down, leaving a blank
// band under the title.
func drawFigure(c draw.Canvas, p *plot.Plot, legend plot.Legend, legendWidth vg.Length) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	bare := *p
	bare.Legend = plot.NewLegend()
	bare.BackgroundColor = nil
	area := draw.Crop(c, 0, -legendWidth, 0, 0)
	if text := p.Y.Label.Text; text != "" {
		bare.Y.Label.Text = ""
		sty := p.Y.Label.TextStyle
		height := sty.Height(text)
		below := xAxisHeight(p)
		y := area.Min.Y + below + (area.Size().Y-top-below)/2
		sty.Rotation += math.Pi / 2
		c.FillText(sty, vg.Point{X: area.Min.X + height - sty.FontExtents().Descent, Y: y}, text)
		area = draw.Crop(area, height+p.Y.Label.Padding, 0, 0, 0)
	}
	bare.Draw(area)
	if legendWidth == 0 {
		return
	}
	legend.Draw(draw.Crop(c, c.Size().X-legendWidth+legendGap, -legendGap, 0, -top-legendGap))
}

// xAxisHeight is about the height gonum/plot gives p's X axis: its label,
// tick marks and tick labels, and padding.
func xAxisHeight(p *plot.Plot) vg.Length {
	h := p.X.Tick.Length + p.X.Tick.Label.Height("0") + p.X.Width/2 + p.X.Padding
	if p.X.Label.Text != "" {
		h += p.X.Label.TextStyle.Height(p.X.Label.Text) + p.X.Label.Padding
	}
	return h
}

// writeFigure writes the drawn canvas c to the file path.
func writeFigure(path string, c io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	return nil
}

// addSeries adds one series to p: the line through pts in col, with a
// marker of shape at each point unless shape is nil, and under it, when
// banded, the band between lo and hi shaded in col. It returns the legend
// thumbnails that show all three.
func addSeries(p *plot.Plot, pts plotter.XYs, lo, hi []float64, banded bool, col color.Color, shape draw.GlyphDrawer) ([]plot.Thumbnailer, error) {
	var thumbs []plot.Thumbnailer
	if banded {
		band, err := ciBand(pts, lo, hi, col)
		if err != nil {
			return nil, err
		}
		p.Add(band)
		thumbs = append(thumbs, band)
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = col, vg.Points(1.5)
	p.Add(line)
	thumbs = append(thumbs, line)
	if shape != nil {
		points, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		points.Color, points.Shape = col, shape
		p.Add(points)
		thumbs = append(thumbs, points)
	}
	return thumbs, nil
}

// ciBand is the area between lo[i] and hi[i] at pts[i].X, filled with col
// made translucent and without an outline.
func ciBand(pts plotter.XYs, lo, hi []float64, col color.Color) (*plotter.Polygon, error) {
	if len(lo) != len(pts) || len(hi) != len(pts) {
		return nil, fmt.Errorf("a band of %d points with %d lower and %d upper bounds", len(pts), len(lo), len(hi))
	}
	ring := make(plotter.XYs, 0, 2*len(pts))
	for i, pt := range pts {
		ring = append(ring, plotter.XY{X: pt.X, Y: hi[i]})
	}
	for i := len(pts) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: pts[i].X, Y: lo[i]})
	}
	band, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, err
	}
	band.Color = translucent(col)
	band.LineStyle.Width = 0
	return band, nil
}

// translucent returns c with alpha 0x38, for shaded bands.
func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x38}
}

// addBandKey ends p's legend with a line saying what the shaded bands are,
// when there are runs enough (more than one) to draw them.
func addBandKey(p *plot.Plot, runs int) {
	if runs > 1 {
		p.Legend.Add(fmt.Sprintf("shaded: 95%% CI of the mean (%d runs)", runs))
	}
}

// plotBAI draws one figure per paper figure: mean sample complexity against
// N, log–log, with the 95% interval over the runs as a shaded band when a
// point has more than one run.
func plotBAI(o BAIOptions, grid []baiSeries, sum map[string]map[int]baiPoint) ([]string, error) {
	var files []string
	for _, fig := range baiFigures() {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s (Problem %d)", fig.Title, o.Problem)
		p.X.Label.Text = "agents N"
		p.Y.Label.Text = "sample complexity (global steps, all agents)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = agentTicks(o.Agents)
		i, runs := 0, 0
		for _, s := range grid {
			if !contains(s.Figures, fig.Name) {
				continue
			}
			pts := make(plotter.XYs, len(o.Agents))
			lo, hi := make([]float64, len(o.Agents)), make([]float64, len(o.Agents))
			banded := false
			for j, n := range o.Agents {
				pt := sum[s.Name][n]
				pts[j] = plotter.XY{X: float64(n), Y: pt.Mean}
				// A log axis has no room for an interval reaching 0 or
				// below (two runs far apart): such a band is cut at a
				// tenth of the mean.
				lo[j], hi[j] = max(pt.Low, pt.Mean/10), pt.High
				banded = banded || pt.N > 1
				runs = max(runs, pt.N)
			}
			c := plotutil.Color(i)
			thumbs, err := addSeries(p, pts, lo, hi, banded, c, plotutil.Shape(i))
			if err != nil {
				return nil, err
			}
			p.Legend.Add(s.Name, thumbs...)
			i++
		}
		addBandKey(p, runs)
		p.Add(plotter.NewGrid())
		f, err := savePlot(p, filepath.Join(o.Out, fmt.Sprintf("bai_problem%d_%s", o.Problem, fig.Name)))
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
// per-agent regret against n. EXP1 and EXP3 shade the 95% interval of the
// mean over every run of the point (instances × runs); EXP2's FRR is a ratio
// of two means, with no sample of its own to draw an interval from (the
// results file pairs it by instance instead).
func plotPFCB(o PFCBOptions, runs []PFCBRun, eps []float64, frr, perN map[string][]float64) ([]string, error) {
	var files []string
	for _, fam := range []string{"uniform", "normal"} {
		p := plot.New()
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
			thumbs, err := addSeries(p, pts, lo, hi, len(curves) > 1, plotutil.Color(i), nil)
			if err != nil {
				return nil, err
			}
			p.Legend.Add(s.name, thumbs...)
		}
		addBandKey(p, most)
		p.Add(plotter.NewGrid())
		f, err := savePlot(p, filepath.Join(o.Out, fmt.Sprintf("pfcb_exp1_%s", fam)))
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}

	p := plot.New()
	p.Title.Text = "EXP2: FRR of P-FCB against ε (n = 10, m = 30)"
	p.X.Label.Text = "privacy budget ε (total over the session)"
	p.Y.Label.Text = "FRR = regret(P-FCB) / regret(Non-federated)"
	for i, fam := range []string{"uniform", "normal"} {
		pts := make(plotter.XYs, len(eps))
		for j, x := range eps {
			pts[j] = plotter.XY{X: x, Y: frr[fam][j]}
		}
		thumbs, err := addSeries(p, pts, nil, nil, false, plotutil.Color(i), plotutil.Shape(i))
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
	f, err := savePlot(p, filepath.Join(o.Out, "pfcb_exp2_frr"))
	if err != nil {
		return nil, err
	}
	files = append(files, f...)

	p = plot.New()
	p.Title.Text = "EXP3: regret per agent against n (P-FCB, ε = 1, m = 30)"
	p.X.Label.Text = "agents n"
	p.Y.Label.Text = "regret per agent at T (revenue units)"
	most := 0
	ns := intsToFloats(o.Agents)
	for i, fam := range []string{"uniform", "normal"} {
		pts := make(plotter.XYs, len(o.Agents))
		lo, hi := make([]float64, len(o.Agents)), make([]float64, len(o.Agents))
		for j, n := range o.Agents {
			s := pfcbMean(runs, func(r PFCBRun) bool {
				return r.Family == fam && r.Algorithm == pfcb.AlgPFCB && r.Epsilon == 1 && r.Agents == n
			})
			// perN holds the same means; the runs give their intervals.
			pts[j] = plotter.XY{X: ns[j], Y: perN[fam][j]}
			lo[j], hi[j] = s.Low, s.High
			most = max(most, s.N)
		}
		thumbs, err := addSeries(p, pts, lo, hi, most > 1, plotutil.Color(i), plotutil.Shape(i))
		if err != nil {
			return nil, err
		}
		p.Legend.Add(fam+" instances", thumbs...)
	}
	addBandKey(p, most)
	p.Add(plotter.NewGrid())
	f, err = savePlot(p, filepath.Join(o.Out, "pfcb_exp3_agents"))
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
		s := Summarize(xs)
		pts[j] = plotter.XY{X: float64(int64(j+1) * every), Y: s.Mean}
		lo[j], hi[j] = s.Low, s.High
	}
	return pts, lo, hi
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
