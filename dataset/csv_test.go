package dataset

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// writeTable writes text to a file in a fresh directory and returns its
// path.
func writeTable(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "table.csv")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadTableErrors checks that every kind of bad table is refused with
// an error naming the file and, for a bad cell, its line and column.
func TestReadTableErrors(t *testing.T) {
	tests := []struct {
		name, text, label string
		want              []string // substrings of the error, besides the path
	}{
		{"empty", "", "class", []string{"is empty", "want a header"}},
		{"comments only", "# nothing\n# here\n", "class", []string{"is empty"}},
		{"no header", "0.1,0.2,1\n0.3,0.4,0\n", "class", []string{"line 1: no header", "0.1,0.2,1", "must name the columns"}},
		{"no header after a comment", "# data\n1,2,0\n", "class", []string{"line 2: no header"}},
		{"unknown label", "a,b,species\n0.1,0.2,1\n", "class", []string{`line 1: no column "class" in the header (columns: a, b, species)`}},
		{"label twice", "class,a,class\n1,0.1,1\n", "class", []string{`columns 1 and 3 "class"`}},
		{"label only", "class\n1\n", "class", []string{`only the label column "class"`, "at least one feature column"}},
		{"unnamed column", "a,,class\n0.1,0.2,1\n", "class", []string{"line 1: column 2 of the header has no name"}},
		{"header only", "a,b,class\n", "class", []string{"has a header but no rows"}},
		{"no label asked", "a,b,class\n0.1,0.2,1\n", "", []string{"name its label column"}},
		{"text cell", "a,b,class\n0.1,0.2,1\n0.3,big,0\n", "class", []string{`line 3, column 2 (b): "big" is not a finite number`, `every column but the label "class"`}},
		{"empty cell", "a,b,class\n0.1,0.2,1\n,0.4,0\n", "class", []string{"line 3, column 1 (a): the cell is empty (a missing value)"}},
		{"NaN cell", "a,b,class\nNaN,0.2,1\n", "class", []string{`line 2, column 1 (a): "NaN" is not a finite number`}},
		{"infinite cell", "a,b,class\n0.1,-Inf,1\n", "class", []string{`line 2, column 2 (b): "-Inf" is not a finite number`}},
		{"fractional label", "a,class,b\n0.1,1.5,0.2\n", "class", []string{`line 2, column 2 (class): label "1.5" is not a class: want an integer in 0..255`}},
		{"negative label", "a,b,class\n0.1,0.2,-1\n", "class", []string{`line 2, column 3 (class): label "-1" is not a class`}},
		{"text label", "a,b,class\n0.1,0.2,setosa\n", "class", []string{`line 2, column 3 (class): label "setosa" is not a class`}},
		{"empty label", "a,b,class\n0.1,0.2,\n", "class", []string{`line 2, column 3 (class): label an empty cell is not a class`}},
		{"label too large", "a,b,class\n0.1,0.2,256\n", "class", []string{`label "256" is not a class: want an integer in 0..255`}},
		{"short row", "a,b,class\n0.1,0.2,1\n0.3,0\n", "class", []string{"line 3: 2 fields, but the header (line 1) names 3 columns (a,b,class)"}},
		{"long row", "a,class\n0.1,1\n0.3,0,7\n", "class", []string{"line 3: 3 fields, but the header (line 1) names 2 columns"}},
		{"line numbers count comments", "# a table\na,b,class\n# a comment\n0.1,0.2,1\n0.3,x,0\n", "class", []string{`line 5, column 2 (b): "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTable(t, tt.text)
			_, err := ReadTable(path, tt.label, nil)
			if err == nil {
				t.Fatalf("ReadTable accepted %q", tt.text)
			}
			for _, w := range append([]string{path}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	missing := filepath.Join(t.TempDir(), "missing.csv")
	_, err := ReadTable(missing, "class", nil)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing table: err = %v, want fs.ErrNotExist naming %s", err, missing)
	}
}

// TestReadTable checks what ReadTable accepts: quoted fields, spaces, a
// byte-order mark, CRLF line ends, comments, integral labels written as
// floats, the label in any column.
func TestReadTable(t *testing.T) {
	path := writeTable(t, "\ufeff# measured in 2024\r\n\"x 1\", species ,x2\r\n 0.5,\"1\",-0.25\r\n# a comment\r\n0,2.0,1e-1\r\n")
	var stages []string
	tab, err := ReadTable(path, "species", func(s string) { stages = append(stages, s) })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tab.Features, "|"); got != "x 1|x2" {
		t.Errorf("features %q, want x 1|x2", got)
	}
	if tab.LabelColumn != 2 || tab.Rows() != 2 {
		t.Errorf("label column %d, %d rows; want 2 and 2", tab.LabelColumn, tab.Rows())
	}
	if want := []int{1, 2}; tab.Labels[0] != want[0] || tab.Labels[1] != want[1] {
		t.Errorf("labels %v, want %v", tab.Labels, want)
	}
	if want := []int{3, 5}; tab.Lines[0] != want[0] || tab.Lines[1] != want[1] {
		t.Errorf("lines %v, want %v", tab.Lines, want)
	}
	if want := mat.NewDense(2, 2, []float64{0.5, -0.25, 0, 0.1}); !mat.Equal(tab.X, want) {
		t.Errorf("X = %v, want %v", mat.Formatted(tab.X), mat.Formatted(want))
	}
	if len(stages) == 0 || !strings.HasPrefix(stages[0], "reading "+path) {
		t.Errorf("progress stages %q, want reading %s first", stages, path)
	}
}

// TestTableBanditErrors checks the refusals of Table.Bandit: labels outside
// the arms, too many steps, a PCA wider than the table, contexts of norm
// above 1 without normalisation, a single class.
func TestTableBanditErrors(t *testing.T) {
	const text = "a,b,class\n0.1,0.2,0\n0.3,0.1,1\n# skip\n0.2,0.2,2\n"
	tests := []struct {
		name, text string
		o          TableOptions
		limit      int
		want       []string
		norm       bool // a *NormError
		rangeArg   string
	}{
		{"label beyond arms", text, TableOptions{Arms: 2}, 0, []string{"line 5, column 3 (class): label 2 is not a class in 0..1 (2 arms)"}, false, ""},
		{"steps beyond rows", text, TableOptions{}, 4, []string{"4 steps, but it has only 3 contexts"}, false, "steps"},
		{"negative steps", text, TableOptions{}, -1, []string{"-1 steps is negative"}, false, "steps"},
		{"one arm", text, TableOptions{Arms: 1}, 0, []string{"1 arms, want 2..256"}, false, "arms"},
		{"PCA too wide", text, TableOptions{PCA: 3}, 0, []string{"PCA to 3 components, but the table has 2 feature columns (a, b); want 1..2"}, false, ""},
		{"negative PCA", text, TableOptions{PCA: -1}, 0, []string{"PCA to -1 components"}, false, ""},
		{"one class", "a,class\n0.5,0\n0.1,0\n", TableOptions{}, 0, []string{"every row's label is 0; a bandit needs at least two classes"}, false, ""},
		{"one class of several arms", "a,class\n0.5,2\n0.1,2\n", TableOptions{Arms: 3}, 0, []string{"every row's label is 2; a bandit needs at least two classes"}, false, ""},
		{"norm above 1", "a,b,class\n0.6,0.8,0\n0.9,0.5,1\n", TableOptions{}, 0, []string{"line 3: its features have norm 1.02956", "at most 1"}, true, ""},
		{"scales apart", "a,b,class\n1000,0.01,0\n0,0.02,1\n500,0,0\n", TableOptions{}, 0, []string{"line 2: its features have norm 1000", "the columns' scales differ by orders of magnitude (a has standard deviation 408, b 0.00816), so standardize them first"}, true, ""},
		{"projection norm above 1", "a,b,class\n0,0,0\n3,0,1\n0,4,0\n", TableOptions{PCA: 1}, 0, []string{"line 3: its projection onto 1 principal components has norm"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTable(t, tt.text)
			tt.o.Label = "class"
			_, err := LoadCSV(path, tt.o, tt.limit)
			if err == nil {
				t.Fatalf("LoadCSV accepted %+v, limit %d", tt.o, tt.limit)
			}
			for _, w := range append([]string{path}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var ne *NormError
			if errors.As(err, &ne) != tt.norm {
				t.Errorf("errors.As(%v, *NormError) = %v, want %v", err, !tt.norm, tt.norm)
			}
			var re *RangeError
			if got := errors.As(err, &re); got != (tt.rangeArg != "") || got && re.Arg != tt.rangeArg {
				t.Errorf("error %v: a RangeError %v (%+v), want one of argument %q", err, got, re, tt.rangeArg)
			}
		})
	}
}

// TestTableBandit checks the contexts and rewards of a table: unchanged
// columns without options, arms inferred from the labels, one-hot rewards,
// a prefix for a limit; with PCA and normalisation, FitPCA's projection
// scaled to unit norm, as Fashion-MNIST's contexts are.
func TestTableBandit(t *testing.T) {
	path := writeTable(t, "a,b,c,class\n0.1,0.2,0.3,2\n0.3,0.1,0,0\n-0.2,0.2,0.4,1\n0.5,-0.5,0.1,2\n0,0,0,0\n")
	tab, err := ReadTable(path, "class", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tab.Bandit(TableOptions{Label: "class"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.Arms != 3 || len(b.Contexts) != 3 || len(b.Rewards) != 3 || b.Explained != 1 {
		t.Fatalf("%d arms, %d contexts, %d reward rows, explained %v; want 3, 3, 3, 1", b.Arms, len(b.Contexts), len(b.Rewards), b.Explained)
	}
	wantRewards := [][]float64{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}
	for i := range 3 {
		for j, v := range b.Contexts[i] {
			if v != tab.X.At(i, j) {
				t.Errorf("context %d = %v, want row %d of the table", i, b.Contexts[i], i)
				break
			}
		}
		for a, v := range b.Rewards[i] {
			if v != wantRewards[i][a] {
				t.Errorf("rewards %d = %v, want %v", i, b.Rewards[i], wantRewards[i])
				break
			}
		}
	}

	before := mat.DenseCopyOf(tab.X)
	b, err = tab.Bandit(TableOptions{Label: "class", Arms: 5, PCA: 2, Normalize: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(tab.X, before) {
		t.Error("Bandit changed the table's X")
	}
	if b.Arms != 5 || len(b.Contexts) != 5 || len(b.Rewards[0]) != 5 {
		t.Errorf("%d arms, %d contexts, %d rewards a row; want 5, 5, 5", b.Arms, len(b.Contexts), len(b.Rewards[0]))
	}
	if !(b.Explained > 0.5 && b.Explained <= 1) {
		t.Errorf("the PCA keeps %v of the variance, want in (0.5, 1]", b.Explained)
	}
	p, err := FitPCA(tab.X, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Project(tab.X)
	if err != nil {
		t.Fatal(err)
	}
	NormalizeRows(want)
	for i, row := range b.Contexts {
		if len(row) != 2 {
			t.Fatalf("context %d has %d values, want 2", i, len(row))
		}
		var n2 float64
		for j, v := range row {
			n2 += v * v
			if math.Abs(v-want[i][j]) > 1e-12 {
				t.Errorf("context %d = %v, want %v", i, row, want[i])
				break
			}
		}
		if math.Abs(n2-1) > 1e-12 {
			t.Errorf("context %d has norm² %v, want 1", i, n2)
		}
	}
}

// TestExampleTable checks examples/data/iris.csv as its README describes
// it: 300 rows, four measurements, every flower's species 0, 1 or 2 and
// each species 100 times.
func TestExampleTable(t *testing.T) {
	tab, err := ReadTable(filepath.Join("..", "examples", "data", "iris.csv"), "species", nil)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Rows() != 300 || len(tab.Features) != 4 {
		t.Fatalf("%d rows of %d features, want 300 of 4", tab.Rows(), len(tab.Features))
	}
	counts := map[int]int{}
	for _, l := range tab.Labels {
		counts[l]++
	}
	if len(counts) != 3 || counts[0] != 100 || counts[1] != 100 || counts[2] != 100 {
		t.Errorf("species counts %v, want 100 each of 0, 1, 2", counts)
	}
}

// TestTableStandardize: Standardize z-scores every column with the whole
// table's statistics and then scales each context to unit norm, so a
// column of large numbers no longer sets every context's direction; a
// column that does not vary becomes 0. Unused names the classes no row
// has, Majority the share of the most common label among the steps.
func TestTableStandardize(t *testing.T) {
	path := writeTable(t, "big,small,flat,class\n1000,0.01,5,0\n0,0.03,5,2\n2000,0.02,5,0\n1000,0.02,5,0\n")
	b, err := LoadCSV(path, TableOptions{Label: "class", Standardize: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// big: mean 1000, sd √500000; small: mean 0.02, sd √0.00005.
	sdBig, sdSmall := math.Sqrt(500000), math.Sqrt(0.00005)
	z := [][]float64{{0, -0.01 / sdSmall, 0}, {-1000 / sdBig, 0.01 / sdSmall, 0}, {1000 / sdBig, 0, 0}, {0, 0, 0}}
	for i, want := range z {
		norm := math.Hypot(want[0], want[1])
		for j := range want {
			if norm > 0 {
				want[j] /= norm
			}
			if got := b.Contexts[i][j]; math.Abs(got-want[j]) > 1e-9 {
				t.Errorf("context %d = %v, want %v", i, b.Contexts[i], want)
				break
			}
		}
	}
	if b.Arms != 3 || !slices.Equal(b.Unused, []int{1}) || b.Majority != 0.75 {
		t.Errorf("arms %d, unused %v, majority %v; want 3, [1], 0.75", b.Arms, b.Unused, b.Majority)
	}
	if _, err := LoadCSV(path, TableOptions{Label: "class", Normalize: true}, 0); err != nil {
		t.Errorf("Normalize alone: %v", err)
	}
}
