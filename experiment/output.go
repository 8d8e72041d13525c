package experiment

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Claim is one of the paper's claims and whether the numbers bear it out.
type Claim struct {
	Text  string
	Holds bool
	// Unresolved says the runs cannot tell whether the claim holds: the
	// quantities it compares differ by less than their noise (their 95 %
	// intervals overlap), or a single run gives no noise to compare with.
	// Holds is then false.
	Unresolved bool
	Note       string
}

// Verdict is the claim's verdict in words: "holds", "does not hold" or
// "not resolved".
func (c Claim) Verdict() string {
	switch {
	case c.Unresolved:
		return "not resolved"
	case c.Holds:
		return "holds"
	}
	return "does not hold"
}

// WriteClaims renders claims as a Markdown list: each claim, whether the
// numbers bear it out, and its note.
func WriteClaims(b *strings.Builder, claims []Claim) {
	for _, c := range claims {
		fmt.Fprintf(b, "- %s: **%s**", c.Text, c.Verdict())
		if c.Note != "" {
			fmt.Fprintf(b, " (%s)", c.Note)
		}
		b.WriteString("\n")
	}
}

// WriteCSV writes the CSV file path: the header, then the rows.
func WriteCSV(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(append([][]string{header}, rows...)); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// WriteTableHead writes the head of a Markdown table: a row of the cells
// lead, then one cell per column, cols[i] formatted by format, and the rule
// under it.
func WriteTableHead[T any](b *strings.Builder, lead []string, format string, cols []T) {
	b.WriteString("|")
	for _, c := range lead {
		fmt.Fprintf(b, " %s |", c)
	}
	for _, c := range cols {
		fmt.Fprintf(b, " "+format+" |", c)
	}
	b.WriteString("\n|" + strings.Repeat("---|", len(lead)+len(cols)) + "\n")
}

// MDCell escapes the pipes of a Markdown table cell.
func MDCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// FmtG formats x in the fewest digits that read back as x.
func FmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
