package experiment

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteTableHead checks a Markdown table's head: the leading cells, one
// formatted cell per column, and a rule with a cell for each.
func TestWriteTableHead(t *testing.T) {
	var b strings.Builder
	WriteTableHead(&b, []string{"ε", "η"}, "T = %d", []int64{50, 500})
	if want := "| ε | η | T = 50 | T = 500 |\n|---|---|---|---|\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteTableHead(&b, []string{"n"}, "%d", []int(nil))
	if want := "| n |\n|---|\n"; b.String() != want {
		t.Errorf("no columns: got %q, want %q", b.String(), want)
	}
}

// TestWriteCSV checks that the file reads back as the header and the rows,
// quoting included.
func TestWriteCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	header := []string{"a", "b"}
	rows := [][]string{{"1", "x,y"}, {"2", `say "hi"`}}
	if err := WriteCSV(path, header, rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := append([][]string{header}, rows...); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("read back %q, want %q", got, want)
	}
	if err := WriteCSV(filepath.Join(t.TempDir(), "no", "such", "dir.csv"), header, rows); err == nil {
		t.Error("writing into a missing directory: no error")
	}
}
