package ping

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// FormatResult is protocol.Family's FormatResult: the median and p99
// round-trip matrices as tables, in milliseconds.
func (family) FormatResult(w io.Writer, result []byte) error {
	var m Matrix
	if err := json.Unmarshal(result, &m); err != nil {
		return fmt.Errorf("decoding a ping result: %w", err)
	}
	for _, t := range []struct {
		title string
		v     [][]float64
	}{{"median", m.MedianMicros}, {"p99", m.P99Micros}} {
		fmt.Fprintf(w, "Round-trip time, %s of %d, ms (row: from, column: to)\n", t.title, m.Count)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\t%s\t\n", strings.Join(m.Participants, "\t"))
		for i, row := range t.v {
			cells := make([]string, len(row))
			for j, us := range row {
				if i == j {
					cells[j] = "-"
				} else {
					cells[j] = fmt.Sprintf("%.3f", us/1e3)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", m.Participants[i], strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}
