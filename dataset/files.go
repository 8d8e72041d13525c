package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// The on-disk formats of the contextual bandit's private data. Each
// organisation reads only its own file:
//
//   - a feature party's file (PartyFile(p)) holds that party's columns of
//     every context, one context per line;
//   - the reward receiver's file (RewardsFile) holds, for every context, the
//     realised reward of every arm, one context per line.
//
// Both are CSV: comma-separated floats, no quoting, formatted with
// strconv's 'g' format and the shortest precision that round-trips, so a
// file read back gives the very same float64 values. Lines starting with
// '#' are comments (the writers put one header comment first); a file may
// end with or without a newline. NaN and infinities are refused.

// RewardsFile is the name of the reward receiver's file in a directory
// written by Prepare.
const RewardsFile = "rewards.csv"

// maxLine bounds one line of a features or rewards file (1 MiB: about
// 40,000 values).
const maxLine = 1 << 20

// PartyFile returns the name of feature party p's file in a directory
// written by Prepare: party0.csv, party1.csv, ….
func PartyFile(p int) string { return fmt.Sprintf("party%d.csv", p) }

// Split returns the column ranges [lo, hi) of p feature parties over d
// features: a public convention the simulator and the daemons share. Party i
// gets a contiguous block; block sizes differ by at most one, and the first
// d mod p parties get the larger blocks. With p > d the last parties get
// empty blocks. Split returns nil when p < 1 or d < 0.
func Split(d, p int) [][2]int {
	if p < 1 || d < 0 {
		return nil
	}
	ranges := make([][2]int, p)
	size, extra := d/p, d%p
	lo := 0
	for i := range ranges {
		hi := lo + size
		if i < extra {
			hi++
		}
		ranges[i] = [2]int{lo, hi}
		lo = hi
	}
	return ranges
}

// Columns returns the columns lo..hi−1 of every row (sub-slices, not copies).
func Columns(rows [][]float64, lo, hi int) [][]float64 {
	out := make([][]float64, len(rows))
	for i, row := range rows {
		out[i] = row[lo:hi:hi]
	}
	return out
}

// WriteFeatures writes a feature party's file: one context per line, the
// party's own columns only. The file is created with mode 0600 (it is the
// organisation's private data) and replaced atomically.
func WriteFeatures(path string, rows [][]float64) error {
	return writeCSV(path, "features", rows)
}

// ReadFeatures reads a feature party's file written by WriteFeatures (or by
// hand in the same format). Every line must have wantCols values; wantCols 0
// accepts any positive count as long as every line has the same. Errors name
// the file, line and column at fault.
func ReadFeatures(path string, wantCols int) ([][]float64, error) {
	return readCSV(path, "features", wantCols)
}

// WriteRewards writes the reward receiver's file: one context per line, one
// column per arm holding the realised reward of that arm for that context.
// The file is created with mode 0600 and replaced atomically.
func WriteRewards(path string, rows [][]float64) error {
	return writeCSV(path, "rewards", rows)
}

// ReadRewards reads the reward receiver's file: every line must have one
// value per arm (arms of them; 0 accepts any count shared by all lines).
// Errors name the file, line and column at fault.
func ReadRewards(path string, arms int) ([][]float64, error) {
	return readCSV(path, "rewards", arms)
}

// writeCSV writes rows to path through a temporary file in the same
// directory, renamed into place once complete.
func writeCSV(path, kind string, rows [][]float64) (err error) {
	cols := 0
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	var b []byte
	b = fmt.Appendf(b, "# bandit-node %s: %d rows, %d columns\n", kind, len(rows), cols)
	for i, row := range rows {
		if len(row) != cols {
			return fmt.Errorf("writing %s file %s: row %d has %d columns, row 0 has %d", kind, path, i, len(row), cols)
		}
		if cols == 0 {
			return fmt.Errorf("writing %s file %s: rows have no columns", kind, path)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("writing %s file %s: row %d, column %d is %v; only finite values can be written", kind, path, i, j+1, v)
			}
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, '\n')
	}

	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s file %s: %w", kind, path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("writing %s file %s: %w", kind, path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s file %s: %w", kind, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s file %s: %w", kind, path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s file %s: %w", kind, path, err)
	}
	return nil
}

// readCSV reads a features or rewards file; see ReadFeatures.
func readCSV(path, kind string, wantCols int) ([][]float64, error) {
	if wantCols < 0 {
		return nil, fmt.Errorf("reading %s file %s: %d columns asked for", kind, path, wantCols)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s file: %w", kind, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var rows [][]float64
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'})
		if len(text) > 0 && text[0] == '#' {
			continue
		}
		if len(text) == 0 {
			return nil, fmt.Errorf("%s file %s, line %d: empty line", kind, path, line)
		}
		row, err := parseRow(text)
		if err != nil {
			return nil, fmt.Errorf("%s file %s, line %d, %w", kind, path, line, err)
		}
		if wantCols == 0 && len(rows) == 0 {
			wantCols = len(row)
		}
		if len(row) != wantCols {
			return nil, fmt.Errorf("%s file %s, line %d: %d columns, want %d", kind, path, line, len(row), wantCols)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s file %s, line %d: longer than %d bytes: %w", kind, path, line+1, maxLine, err)
		}
		return nil, fmt.Errorf("reading %s file %s after line %d: %w", kind, path, line, err)
	}
	return rows, nil
}

// parseRow parses one line of comma-separated finite floats. Its errors
// start with the 1-based column at fault.
func parseRow(text []byte) ([]float64, error) {
	row := make([]float64, 0, bytes.Count(text, []byte{','})+1)
	for col := 1; ; col++ {
		field, rest, more := bytes.Cut(text, []byte{','})
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(field)), 64)
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", col, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("column %d: %q is not a finite number", col, field)
		}
		row = append(row, v)
		if !more {
			return row, nil
		}
		text = rest
	}
}
