// Package figuretest checks the figures the experiments draw: that each
// file of a figure (PNG, SVG, PDF) is what it says, and that the 95% bands
// are shaded exactly where there are runs enough to draw them.
package figuretest

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Bands draws an experiment's figures with draw, from made-up summaries
// with one run and with three per point, and checks that each file of each
// figure exists and parses, and that the figures named in banded have their
// shaded 95% bands (translucent fills in the SVG) with three runs and none
// with one; the other figures never have any.
func Bands(t *testing.T, draw func(dir string, runs int) ([]string, error), banded map[string]bool) {
	t.Helper()
	for _, runs := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d runs", runs), func(t *testing.T) {
			files, err := draw(t.TempDir(), runs)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 || len(files)%4 != 0 {
				t.Fatalf("%d files: want PNG, SVG and PDF of each figure, and its data", len(files))
			}
			for _, f := range files {
				name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
				switch filepath.Ext(f) {
				case ".png":
					PNG(t, f)
				case ".pdf":
					PDF(t, f)
				case ".csv":
					Data(t, f)
				case ".svg":
					fills := SVG(t, f)
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

// Data checks a figure's data file (NAME.data.csv, experiment.Figure):
// tidy CSV with the header series, x, y, y_low, y_high and a row at least,
// every x and y a number (or a category, for x).
func Data(t testing.TB, path string) {
	t.Helper()
	if !strings.HasSuffix(path, ".data.csv") {
		t.Errorf("%s: a figure's data file is NAME.data.csv", path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) < 2 || len(rows[0]) != 5 || rows[0][0] != "series" || !strings.HasSuffix(rows[0][3], "_low") {
		t.Fatalf("%s: header %v and %d rows; want series, x, y, y_low, y_high and data", path, rows[0], len(rows)-1)
	}
	for i, r := range rows[1:] {
		if _, err := strconv.ParseFloat(r[2], 64); err != nil {
			t.Errorf("%s, row %d: y %q is not a number", path, i+2, r[2])
		}
	}
}

// PNG checks that the file decodes as a PNG and returns its size.
func PNG(t testing.TB, path string) (cfg struct{ Width, Height int }) {
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

// SVG checks that the file parses as XML with an <svg> root, and
// returns how many of its elements are filled translucently.
func SVG(t testing.TB, path string) (translucent int) {
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

// PDF checks that the file starts as a PDF and ends with its trailer.
func PDF(t testing.TB, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("%PDF-")) || !bytes.Contains(raw[max(0, len(raw)-32):], []byte("%%EOF")) {
		t.Errorf("%s: not a PDF (%d bytes, starts %q)", path, len(raw), raw[:min(8, len(raw))])
	}
}
