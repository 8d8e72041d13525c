package experiment

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bandit-node/bandit-node/protocol/pfcb"
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
			files, err := savePlot(p, filepath.Join(dir, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(dir, strings.TrimSuffix(tt.path, ".png"))
			if want := []string{base + ".png", base + ".svg", base + ".pdf"}; fmt.Sprint(files) != fmt.Sprint(want) {
				t.Fatalf("files %v, want %v", files, want)
			}
			cfg := checkPNG(t, files[0])
			checkSVG(t, files[1])
			checkPDF(t, files[2])
			plotPixels := int(math.Round(float64(figureWidth/vg.Inch) * figureDPI))
			if tt.legend && cfg.Width <= plotPixels {
				t.Errorf("PNG %d px wide with a legend: want more than the plot's %d", cfg.Width, plotPixels)
			}
			if !tt.legend && cfg.Width != plotPixels {
				t.Errorf("PNG %d px wide without a legend: want the plot's %d", cfg.Width, plotPixels)
			}
		})
	}
	if _, err := savePlot(plot.New(), filepath.Join(t.TempDir(), "no", "such", "dir", "fig")); err == nil {
		t.Error("saving into a missing directory: no error")
	}
}

// TestFiguresBands draws every experiment's figures from made-up summaries
// with one run and with three per point, and checks that each file of each
// figure exists and parses, and that the banded figures have their shaded
// 95% bands (translucent fills in the SVG) with three runs and none with one.
func TestFiguresBands(t *testing.T) {
	draw := map[string]func(dir string, runs int) ([]string, error){
		"bai":   drawBAI,
		"pfcb":  drawPFCB,
		"mpccb": drawMPCCB,
	}
	// The figures that have runs to shade; the others never do.
	banded := map[string]bool{
		"bai_problem2_fig1_dp_mase": true, "bai_problem2_fig1_corrupted": true, "bai_problem2_fig5_beta": true,
		"bai_problem2_fig6_dp_mase": true, "bai_problem2_fig6_corrupted": true,
		"pfcb_exp1_uniform": true, "pfcb_exp1_normal": true, "pfcb_exp3_agents": true,
		"fig1_reward": true, "fig2_reward_vs_eta": true,
	}
	for _, exp := range []string{"bai", "pfcb", "mpccb"} {
		for _, runs := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d runs", exp, runs), func(t *testing.T) {
				files, err := draw[exp](t.TempDir(), runs)
				if err != nil {
					t.Fatal(err)
				}
				if len(files) == 0 || len(files)%3 != 0 {
					t.Fatalf("%d files: want PNG, SVG and PDF of each figure", len(files))
				}
				for _, f := range files {
					name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
					switch filepath.Ext(f) {
					case ".png":
						checkPNG(t, f)
					case ".pdf":
						checkPDF(t, f)
					case ".svg":
						fills := checkSVG(t, f)
						if want := banded[name] && runs > 1; (fills > 0) != want {
							t.Errorf("%s: %d translucent fills, want bands: %v", name, fills, want)
						}
					default:
						t.Errorf("unexpected file %s", f)
					}
				}
			})
		}
	}
}

func drawBAI(dir string, runs int) ([]string, error) {
	o := BAIOptions{Out: dir, Runs: runs, Agents: []int{64, 128, 256}, Problem: 2}
	grid := baiGrid()
	sum := map[string]map[int]baiPoint{}
	for i, s := range grid {
		sum[s.Name] = map[int]baiPoint{}
		for j, n := range o.Agents {
			m := float64(1000 * (i + 1) * (j + 1))
			half := 0.0
			if runs > 1 {
				half = m / 5
			}
			sum[s.Name][n] = baiPoint{Summary: Summary{N: runs, Mean: m, Low: m - half, High: m + half}}
		}
	}
	return plotBAI(o, grid, sum)
}

func drawPFCB(dir string, runs int) ([]string, error) {
	o := PFCBOptions{Out: dir, Agents: []int{2, 4}}
	eps := []float64{0.5, 1, 2}
	var rs []PFCBRun
	for _, fam := range []string{"uniform", "normal"} {
		add := func(alg string, e float64, n int, base float64) {
			for r := range runs {
				run := PFCBRun{RegretPerAgent: base + float64(r), CurveEvery: 100}
				run.Family, run.Algorithm, run.Epsilon, run.Agents, run.Run = fam, alg, e, n, r
				for k := 1; k <= 5; k++ {
					run.Curve = append(run.Curve, base*float64(k)/5+float64(r))
				}
				rs = append(rs, run)
			}
		}
		add(pfcb.AlgFCB, 0, 10, 100)
		add(pfcb.AlgNonFederated, 0, 10, 200)
		for _, e := range eps {
			add(pfcb.AlgPFCB, e, 10, 150/e)
		}
		for _, n := range o.Agents {
			add(pfcb.AlgPFCB, 1, n, 300/float64(n))
		}
	}
	frr := map[string][]float64{"uniform": {1.2, 0.9, 0.8}, "normal": {1.1, 0.8, 0.7}}
	perN := map[string][]float64{}
	for _, fam := range []string{"uniform", "normal"} {
		for _, n := range o.Agents {
			perN[fam] = append(perN[fam], 300/float64(n)+float64(runs-1)/2)
		}
	}
	return plotPFCB(o, rs, eps, frr, perN)
}

func drawMPCCB(dir string, runs int) ([]string, error) {
	o := MPCCBOptions{Out: dir, Runs: runs, CurveEpsilons: []float64{0.1, 0.2}, Arms: []int{10, 20}, Parties: []int{2},
		ScaleParties: []int{2, 3}, ScaleArms: []int{10}}
	summary := func(m float64) Summary {
		if runs == 1 {
			return Summary{N: 1, Mean: m, Low: m, High: m}
		}
		return Summary{N: runs, Mean: m, Low: m - 0.05, High: m + 0.05, StdDev: 0.04}
	}
	var curves []mpccbCurve
	for _, e := range o.CurveEpsilons {
		c := mpccbCurve{Epsilon: e, Runs: runs, Steps: []int64{100, 200, 300}}
		for k := range c.Steps {
			c.Private = append(c.Private, summary(0.3+0.1*float64(k)))
			c.Reference = append(c.Reference, summary(0.3+0.1*float64(k)))
		}
		curves = append(curves, c)
	}
	fig2 := []etaSeries{{T: 300, Points: []etaPoint{
		{Epsilon: 0, Reference: summary(0.7)},
		{Epsilon: 0.1, Private: summary(0.5)},
		{Epsilon: 0.2, Private: summary(0.6)},
	}}}
	var timing []MPCCBRun
	for _, a := range []int{10, 20} {
		var r MPCCBRun
		r.Kind, r.Arms, r.Parties, r.MsPerStep = "timing", a, 2, float64(a)
		timing = append(timing, r)
	}
	var r MPCCBRun
	r.Kind, r.Arms, r.Parties, r.MsPerStep = "timing", 10, 3, 15
	timing = append(timing, r)
	return plotMPCCB(o, curves, fig2, timing)
}

// checkPNG checks that the file decodes as a PNG and returns its size.
func checkPNG(t *testing.T, path string) (cfg struct{ Width, Height int }) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return struct{ Width, Height int }{c.Width, c.Height}
}

// checkSVG checks that the file parses as XML with an <svg> root, and
// returns how many of its elements are filled translucently.
func checkSVG(t *testing.T, path string) (translucent int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(raw))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", path, err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Local
		}
		for _, a := range el.Attr {
			if a.Name.Local == "style" && fillOpacity(a.Value) < 1 {
				translucent++
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
	return translucent
}

// fillOpacity reads fill-opacity from an SVG style attribute (1 if absent).
func fillOpacity(style string) float64 {
	for _, decl := range strings.Split(style, ";") {
		k, v, ok := strings.Cut(decl, ":")
		if ok && strings.TrimSpace(k) == "fill-opacity" {
			if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return x
			}
		}
	}
	return 1
}

// checkPDF checks that the file starts as a PDF and ends with its trailer.
func checkPDF(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("%PDF-")) || !bytes.Contains(raw[max(0, len(raw)-32):], []byte("%%EOF")) {
		t.Errorf("%s: not a PDF (%d bytes, starts %q)", path, len(raw), raw[:min(8, len(raw))])
	}
}
