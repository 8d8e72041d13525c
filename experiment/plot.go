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
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
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

// SavePlot writes p in the three formats every experiment's figures come in
// — PNG for a quick look, SVG and PDF for papers — as path.png, path.svg and
// path.pdf (an extension .png, .svg or .pdf already on path is replaced), and
// returns the three paths. The legend is drawn beside the plot, never over
// the data, whatever p.Legend's Top and Left say; the background is white.
// Every figure of the experiments goes through here.
func SavePlot(p *plot.Plot, path string) ([]string, error) {
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

// AddSeries adds one series to p: the line through pts in col, with a
// marker of shape at each point unless shape is nil, and under it, when
// banded, the band between lo and hi shaded in col. It returns the legend
// thumbnails that show all three.
func AddSeries(p *plot.Plot, pts plotter.XYs, lo, hi []float64, banded bool, col color.Color, shape draw.GlyphDrawer) ([]plot.Thumbnailer, error) {
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

// AddBandKey ends p's legend with a line saying what the shaded bands are,
// when there are runs enough (more than one) to draw them.
func AddBandKey(p *plot.Plot, runs int) {
	if runs > 1 {
		p.Legend.Add(fmt.Sprintf("shaded: 95%% CI of the mean (%d runs)", runs))
	}
}

// AgentTicks marks an axis of agents (or arms) at each of the values agents,
// labelled with the number.
func AgentTicks(agents []int) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		var t []plot.Tick
		for _, n := range agents {
			t = append(t, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
		}
		return t
	})
}

// IntsToFloats returns xs as float64s, for a plot's coordinates.
func IntsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
