package experiment

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is a plot and the data it draws. Save writes both: the images
// (SavePlot) and, beside them, a tidy CSV of every point of every series
// (NAME.data.csv) —
// so that a figure can be restyled, or overlaid on a paper's, without
// running the experiment again.
type Figure struct {
	*plot.Plot
	// XName and YName name the CSV's x and y columns ("round",
	// "regret_per_agent"); its other columns are series, y_low and y_high
	// (the 95 % interval, empty where a series has none).
	XName, YName string
	rows         [][]string
}

// NewFigure returns an empty figure whose data columns are xName and yName.
func NewFigure(xName, yName string) *Figure {
	return &Figure{Plot: plot.New(), XName: xName, YName: yName}
}

// AddSeries draws one series (the package's AddSeries) and records its
// points, under series, the name its legend gives it.
func (f *Figure) AddSeries(series string, pts plotter.XYs, lo, hi []float64, banded bool, col color.Color, shape draw.GlyphDrawer) ([]plot.Thumbnailer, error) {
	thumbs, err := AddSeries(f.Plot, pts, lo, hi, banded, col, shape)
	if err != nil {
		return nil, err
	}
	f.Record(series, pts, lo, hi)
	return thumbs, nil
}

// Record records the points of a series drawn some other way (error bars,
// a reference line); lo and hi, when not nil, are each point's interval.
func (f *Figure) Record(series string, pts plotter.XYs, lo, hi []float64) {
	for i, pt := range pts {
		row := []string{series, FmtG(pt.X), FmtG(pt.Y), "", ""}
		if lo != nil && hi != nil {
			row[3], row[4] = FmtG(lo[i]), FmtG(hi[i])
		}
		f.rows = append(f.rows, row)
	}
}

// RecordAt records one value of a series at a category, for a figure
// whose x axis names things rather than measures them (a bar per role).
func (f *Figure) RecordAt(series, x string, y float64) {
	f.rows = append(f.rows, []string{series, x, FmtG(y), "", ""})
}

// Save writes the figure as path.png, path.svg and path.pdf (SavePlot)
// and its data as path.data.csv (the experiments' own CSV files keep their
// names: samba_roles.csv is the table, samba_roles.data.csv the figure's
// bars), and returns the four paths.
func (f *Figure) Save(path string) ([]string, error) {
	files, err := SavePlot(f.Plot, path)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(files[0], ".png")
	csvPath := base + ".data.csv"
	if err := WriteCSV(csvPath, []string{"series", f.XName, f.YName, f.YName + "_low", f.YName + "_high"}, f.rows); err != nil {
		return nil, err
	}
	return append(files, csvPath), nil
}
