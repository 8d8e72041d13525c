package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// CSV is the data set of an organisation's own table: a CSV file with a
// header, numeric feature columns and a label column holding each row's
// class, the arm that pays 1 (as a Fashion-MNIST image's label does).
const CSV = "csv"

// MaxClasses bounds the classes (arms) of a table: the contextual bandit's
// largest number of arms (protocol/mpccb.MaxArms). It also keeps a stray
// large label from asking for reward rows of millions of columns.
const MaxClasses = 256

// MaxNorm is the largest context norm a table may keep without
// normalisation: 1, and room for the rounding of a unit-norm row written to
// CSV and read back (the feature parties accept a part of norm 1 + 10⁻⁹).
const MaxNorm = 1 + 1e-9

// readProgressRows is how often ReadTable reports the rows read.
const readProgressRows = 1 << 14

// Table is an organisation's own table as ReadTable read it: one row per
// context, its feature columns in file order and its label.
type Table struct {
	// Path is the file read.
	Path string
	// Features names the feature columns (every column but the label), in
	// file order.
	Features []string
	// Label names the label column; LabelColumn is its 1-based position in
	// the file.
	Label       string
	LabelColumn int
	// X holds the feature values, one row of len(Features) per context.
	X *mat.Dense
	// Labels holds each row's class.
	Labels []int
	// Lines holds the line of the file each row was read from, for errors.
	Lines []int
}

// Rows returns the number of rows (contexts) of the table.
func (t *Table) Rows() int { return len(t.Labels) }

// ReadTable reads a CSV table with a header: the first line that is not a
// comment ('#') names the columns, every other line is one context. Every
// column but label must hold a finite number in every row; label must hold
// a class, an integer in 0..MaxClasses−1 ("2" or "2.0"). Fields may be
// quoted; spaces around a field and a UTF-8 byte-order mark are ignored.
// Errors name the file and, for a bad cell, its line and column. progress,
// if not nil, is told what ReadTable is doing (every few thousand rows).
func ReadTable(path, label string, progress func(stage string)) (*Table, error) {
	if label == "" {
		return nil, fmt.Errorf("CSV table %s: name its label column (the class of each row, the arm that pays 1)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading CSV table: %w", err)
	}
	defer f.Close()
	if progress != nil {
		progress("reading " + path)
	}
	br := bufio.NewReader(f)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		br.Discard(3) // a byte-order mark, as spreadsheets write
	}
	r := csv.NewReader(br)
	r.Comment = '#'
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	r.FieldsPerRecord = -1 // checked below, to name the counts

	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("CSV table %s is empty: want a header naming the columns, then one line per context", path)
	}
	if err != nil {
		return nil, fmt.Errorf("CSV table %s: %w", path, err)
	}
	headerLine, _ := r.FieldPos(0)
	header = trimAll(header) // a copy: Read reuses the record's slice
	t := &Table{Path: path, Label: label}
	numeric := 0
	for i, name := range header {
		if _, err := strconv.ParseFloat(name, 64); err == nil {
			numeric++
		}
		switch {
		case name == "":
			return nil, fmt.Errorf("CSV table %s, line %d: column %d of the header has no name", path, headerLine, i+1)
		case name == label && t.LabelColumn != 0:
			return nil, fmt.Errorf("CSV table %s, line %d: the header names columns %d and %d %q; which is the label?", path, headerLine, t.LabelColumn, i+1, label)
		case name == label:
			t.LabelColumn = i + 1
		default:
			t.Features = append(t.Features, name)
		}
	}
	if numeric == len(header) {
		return nil, fmt.Errorf("CSV table %s, line %d: no header: the first line holds only numbers (%s); the first line must name the columns, e.g. x1,x2,%s",
			path, headerLine, strings.Join(header, ","), label)
	}
	if t.LabelColumn == 0 {
		return nil, fmt.Errorf("CSV table %s, line %d: no column %q in the header (columns: %s)", path, headerLine, label, strings.Join(header, ", "))
	}
	if len(t.Features) == 0 {
		return nil, fmt.Errorf("CSV table %s, line %d: the header names only the label column %q; a context needs at least one feature column", path, headerLine, label)
	}

	d := len(t.Features)
	var flat []float64
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("CSV table %s: %w", path, err) // a csv.ParseError names the line
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("CSV table %s, line %d: %d fields, but the header (line %d) names %d columns (%s); every row needs one field per column",
				path, line, len(rec), headerLine, len(header), strings.Join(header, ","))
		}
		for i, cell := range rec {
			cell = strings.TrimSpace(cell)
			name := header[i]
			if i+1 == t.LabelColumn {
				l, err := parseClass(cell)
				if err != nil {
					return nil, fmt.Errorf("CSV table %s, line %d, column %d (%s): %w", path, line, i+1, name, err)
				}
				t.Labels = append(t.Labels, l)
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				what := fmt.Sprintf("%q is not a finite number", cell)
				if cell == "" {
					what = "the cell is empty (a missing value)"
				}
				return nil, fmt.Errorf("CSV table %s, line %d, column %d (%s): %s; every column but the label %q must hold a number in every row",
					path, line, i+1, name, what, label)
			}
			flat = append(flat, v)
		}
		t.Lines = append(t.Lines, line)
		if progress != nil && len(t.Lines)%readProgressRows == 0 {
			progress(fmt.Sprintf("reading %s: %d rows", path, len(t.Lines)))
		}
	}
	if len(t.Labels) == 0 {
		return nil, fmt.Errorf("CSV table %s has a header but no rows", path)
	}
	t.X = mat.NewDense(len(t.Labels), d, flat)
	return t, nil
}

// trimAll returns a copy of the fields with the spaces around them removed.
func trimAll(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = strings.TrimSpace(f)
	}
	return out
}

// parseClass parses a label cell: an integer class in 0..MaxClasses−1,
// written as an integer or as a float with no fractional part.
func parseClass(cell string) (int, error) {
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil || v != math.Trunc(v) || v < 0 || v >= MaxClasses {
		if cell == "" {
			cell = "an empty cell"
		} else {
			cell = strconv.Quote(cell)
		}
		return 0, fmt.Errorf("label %s is not a class: want an integer in 0..%d, the arm that pays 1", cell, MaxClasses-1)
	}
	return int(v), nil
}

// TableOptions say how a table becomes a contextual bandit.
type TableOptions struct {
	// Label names the label column.
	Label string
	// Arms is the number of arms; every label must be a class in
	// 0..Arms−1. 0 takes the largest label + 1 (at least 2).
	Arms int
	// PCA, if positive, projects the feature columns onto the table's
	// first PCA principal components (FitPCA on all the rows); 0 keeps the
	// columns as they are.
	PCA int
	// Normalize scales every context (after the PCA) to unit norm, as
	// Fashion-MNIST's are (NormalizeRows). Without it every context must
	// already have norm at most MaxNorm.
	Normalize bool
	// Standardize z-scores every feature column first (its mean and
	// standard deviation over all the rows, as the PCA is fitted), so that
	// no column dominates by its scale alone, and then scales every context
	// to unit norm as Normalize does: a z-scored context has a norm near
	// √d. A column that does not vary becomes 0.
	Standardize bool
	// Progress, if not nil, is told what is being done, stage by stage.
	Progress func(stage string)
}

// A NormError reports a context of norm above MaxNorm in a table read
// without normalisation. Callers add how to ask for it (errors.As): the
// data command names its flag --normalize, the simulator its key.
type NormError struct {
	// Path is the table; Line the line of the context.
	Path string
	Line int
	// Norm is the context's norm; PCA its components (0: no PCA).
	Norm float64
	PCA  int
	// Scales, when the feature columns' scales differ by orders of
	// magnitude (ScaleSpread), names the widest and the narrowest column
	// with their standard deviations: the case for Standardize rather
	// than Normalize, under which the widest column alone would set every
	// context's direction.
	Scales string
}

func (e *NormError) Error() string {
	what := "its features have"
	if e.PCA > 0 {
		what = fmt.Sprintf("its projection onto %d principal components has", e.PCA)
	}
	msg := fmt.Sprintf("CSV table %s, line %d: %s norm %.6g; the engine needs every context's norm to be at most 1",
		e.Path, e.Line, what, e.Norm)
	if e.Scales != "" {
		msg += "; the columns' scales differ by orders of magnitude (" + e.Scales + "), so standardize them first"
	}
	return msg
}

// ScaleSpread is the ratio of the widest feature column's standard
// deviation to the narrowest's above which a table's columns are said to
// differ in scale by orders of magnitude (NormError.Scales).
const ScaleSpread = 100

// columnStats returns the mean and standard deviation (over the n rows) of
// every column of x.
func columnStats(x *mat.Dense) (mean, std []float64) {
	n, d := x.Dims()
	mean, std = make([]float64, d), make([]float64, d)
	for i := range n {
		for j, v := range x.RawRowView(i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := range n {
		for j, v := range x.RawRowView(i) {
			t := v - mean[j]
			std[j] += t * t
		}
	}
	for j := range std {
		std[j] = math.Sqrt(std[j] / float64(n))
	}
	return mean, std
}

// scaleSpread names the widest and narrowest varying columns of t when
// their standard deviations differ by ScaleSpread or more, else "".
func (t *Table) scaleSpread(std []float64) string {
	lo, hi := -1, -1
	for j, s := range std {
		if s == 0 {
			continue
		}
		if lo < 0 || s < std[lo] {
			lo = j
		}
		if hi < 0 || s > std[hi] {
			hi = j
		}
	}
	if lo < 0 || std[hi] < ScaleSpread*std[lo] {
		return ""
	}
	return fmt.Sprintf("%s has standard deviation %.3g, %s %.3g", t.Features[hi], std[hi], t.Features[lo], std[lo])
}

// TableBandit is a table made a contextual bandit by (*Table).Bandit.
type TableBandit struct {
	// Contexts holds one context per step, Rewards the realised reward of
	// every arm for it: 1 for the arm of the row's label, 0 otherwise.
	Contexts, Rewards [][]float64
	// Arms is the number of arms (TableOptions.Arms, or the one inferred
	// from the labels).
	Arms int
	// Explained is the fraction of the features' total variance the PCA
	// keeps (1 without PCA; 0 when the features do not vary at all).
	Explained float64
	// Unused lists the arms no row's label names: arms that never pay
	// (gaps in the labels, or more arms asked than classes).
	Unused []int
	// Majority is the fraction of the contexts whose label is the most
	// common one: the average reward of always pulling that arm, which a
	// learned policy should beat.
	Majority float64
}

// Bandit turns the table into a contextual bandit: the first limit rows (all
// of them if limit is 0) as contexts, standardized (o.Standardize),
// projected (o.PCA) and normalised (o.Normalize), with one-hot rewards.
// The column statistics and the PCA are fitted on all the rows,
// and every row's label and norm are checked, so that a shorter run sees a
// prefix of a longer one's data. t.X is not modified.
func (t *Table) Bandit(o TableOptions, limit int) (*TableBandit, error) {
	n, d := t.X.Dims()
	name := fmt.Sprintf("%s (%s)", CSV, t.Path)
	if limit < 0 || limit > n {
		return nil, &RangeError{Dataset: name, Arg: "steps", Value: limit, Max: n}
	}
	if limit == 0 {
		limit = n
	}
	if slices.Min(t.Labels) == slices.Max(t.Labels) {
		return nil, fmt.Errorf("CSV table %s: every row's label is %d; a bandit needs at least two classes (arms) among the rows", t.Path, t.Labels[0])
	}
	arms := o.Arms
	if arms == 0 {
		arms = slices.Max(t.Labels) + 1
	}
	if arms < 2 || arms > MaxClasses {
		return nil, &RangeError{Dataset: name, Arg: "arms", Value: arms, Min: 2, Max: MaxClasses}
	}
	for i, l := range t.Labels {
		if l >= arms {
			return nil, fmt.Errorf("CSV table %s, line %d, column %d (%s): label %d is not a class in 0..%d (%d arms)",
				t.Path, t.Lines[i], t.LabelColumn, t.Label, l, arms-1, arms)
		}
	}
	if o.PCA < 0 || o.PCA > d {
		return nil, fmt.Errorf("CSV table %s: PCA to %d components, but the table has %d feature columns (%s); want 1..%d, or none",
			t.Path, o.PCA, d, strings.Join(t.Features, ", "), d)
	}

	b := &TableBandit{Arms: arms, Explained: 1}
	seen := make([]int, arms)
	for _, l := range t.Labels {
		seen[l]++
	}
	for a, n := range seen {
		if n == 0 {
			b.Unused = append(b.Unused, a)
		}
	}
	top := make([]int, arms)
	for _, l := range t.Labels[:limit] {
		top[l]++
	}
	b.Majority = float64(slices.Max(top)) / float64(limit)
	mean, std := columnStats(t.X)
	x := t.X
	if o.Standardize {
		x = mat.DenseCopyOf(t.X)
		for i := range n {
			row := x.RawRowView(i)
			for j := range row {
				if std[j] == 0 {
					row[j] = 0
				} else {
					row[j] = (row[j] - mean[j]) / std[j]
				}
			}
		}
	}
	var rows [][]float64
	if o.PCA > 0 {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("fitting a %d-component PCA on %d rows of %d columns", o.PCA, n, d))
		}
		p, err := FitPCA(x, o.PCA)
		if err != nil {
			return nil, fmt.Errorf("CSV table %s: %w", t.Path, err)
		}
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("projecting %d rows onto %d components", n, o.PCA))
		}
		if rows, err = p.Project(x); err != nil {
			return nil, fmt.Errorf("CSV table %s: %w", t.Path, err)
		}
		var kept float64
		for _, v := range p.Variances {
			kept += max(v, 0)
		}
		b.Explained = 0
		if total := totalVariance(x, p.Mean); total > 0 {
			b.Explained = min(1, kept/total)
		}
	} else {
		flat := append([]float64(nil), x.RawMatrix().Data...)
		rows = make([][]float64, n)
		for i := range rows {
			rows[i] = flat[i*d : (i+1)*d : (i+1)*d]
		}
	}
	if o.Normalize || o.Standardize {
		NormalizeRows(rows)
	} else {
		for i, row := range rows {
			if nv := math.Sqrt(floats64Dot(row, row)); nv > MaxNorm {
				return nil, &NormError{Path: t.Path, Line: t.Lines[i], Norm: nv, PCA: o.PCA, Scales: t.scaleSpread(std)}
			}
		}
	}
	rewards, err := OneHotRewards(t.Labels[:limit], arms)
	if err != nil {
		return nil, fmt.Errorf("CSV table %s: %w", t.Path, err)
	}
	b.Contexts, b.Rewards = rows[:limit:limit], rewards
	return b, nil
}

// totalVariance returns the sum of the columns' variances (normalised by
// the number of rows, as PCA.Variances are).
func totalVariance(x *mat.Dense, mean []float64) float64 {
	n, _ := x.Dims()
	var s float64
	for i := range n {
		for j, v := range x.RawRowView(i) {
			t := v - mean[j]
			s += t * t
		}
	}
	return s / float64(n)
}

// LoadCSV reads the table at path (ReadTable, label o.Label) and returns its
// bandit (Table.Bandit with o and limit).
func LoadCSV(path string, o TableOptions, limit int) (*TableBandit, error) {
	if limit < 0 {
		return nil, &RangeError{Dataset: fmt.Sprintf("%s (%s)", CSV, path), Arg: "steps", Value: limit, Max: -1}
	}
	t, err := ReadTable(path, o.Label, o.Progress)
	if err != nil {
		return nil, err
	}
	return t.Bandit(o, limit)
}
