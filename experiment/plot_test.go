package experiment

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bandit-node/bandit-node/experiment/internal/figuretest"
)

// TestSavePlotFormats checks that a figure comes out as a PNG that decodes,
// an SVG that parses as XML and a PDF that is one, named after the path with
// its extension replaced, and that the legend gets a column of its own: the
// figure is wider than the plot by the legend's width.
func TestSavePlotFormats(t *testing.T) {
	tests := []struct {
		name, path string
		legend     bool
	}{
		{"extension .png replaced", "fig.png", true},
		{"no extension", "fig", true},
		{"dot in the name kept", "fig_eps0.5", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := plot.New()
			p.Title.Text = "a figure"
			line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 4}})
			if err != nil {
				t.Fatal(err)
			}
			p.Add(line)
			if tt.legend {
				p.Legend.Add("a series with a long name", line)
			}
			files, err := SavePlot(p, filepath.Join(dir, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(dir, strings.TrimSuffix(tt.path, ".png"))
			if want := []string{base + ".png", base + ".svg", base + ".pdf"}; fmt.Sprint(files) != fmt.Sprint(want) {
				t.Fatalf("files %v, want %v", files, want)
			}
			cfg := figuretest.PNG(t, files[0])
			figuretest.SVG(t, files[1])
			figuretest.PDF(t, files[2])
			plotPixels := int(math.Round(float64(figureWidth/vg.Inch) * figureDPI))
			if tt.legend && cfg.Width <= plotPixels {
				t.Errorf("PNG %d px wide with a legend: want more than the plot's %d", cfg.Width, plotPixels)
			}
			if !tt.legend && cfg.Width != plotPixels {
				t.Errorf("PNG %d px wide without a legend: want the plot's %d", cfg.Width, plotPixels)
			}
		})
	}
	if _, err := SavePlot(plot.New(), filepath.Join(t.TempDir(), "no", "such", "dir", "fig")); err == nil {
		t.Error("saving into a missing directory: no error")
	}
}

// TestFiguresBands draws every experiment's figures from made-up summaries
// with one run and with three per point, and checks that each file of each
// figure exists and parses, and that the banded figures have their shaded
