package configexample

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOperationsTableStatesTheDefaults: the table of every section and key
// in docs/operations.md ("defaults in brackets") states the defaults of
// config.DefaultValues, so that the operator's documentation follows a
// changed default too (the test names the row to edit).
func TestOperationsTableStatesTheDefaults(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	const intro = "Every section and key (defaults in brackets"
	_, table, ok := strings.Cut(string(doc), intro)
	if !ok {
		t.Fatalf("docs/operations.md has no table after %q", intro)
	}
	// Brackets that are not a value: the key has none, or takes another
	// key's.
	notValue := map[string]bool{"required": true, "`cert_file`": true}
	defaults := Defaults()
	pair := regexp.MustCompile("`([a-z_]+)` \\[([^\\]]*)\\]")
	section, checked, rows := "", 0, 0
	for line := range strings.Lines(table) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 4 {
			if rows > 0 {
				break // the end of the table
			}
			continue // the end of the introduction
		}
		rows++
		if s := strings.Trim(strings.TrimSpace(cells[1]), "`[]"); s != "" {
			section = s
		}
		for _, m := range pair.FindAllStringSubmatch(cells[2], -1) {
			key, stated := section+"."+m[1], m[2]
			if notValue[stated] {
				continue
			}
			want, ok := defaults[key]
			if !ok {
				t.Errorf("docs/operations.md states a default for %s, which has none (config.DefaultValues)", key)
				continue
			}
			checked++
			if !sameDefault(stated, want) {
				t.Errorf("docs/operations.md states %s [%s], but its default is %s", key, stated, want)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d defaults in docs/operations.md's table; has its form changed?", checked)
	}
}

// sameDefault reports whether the documentation's bracket (such as "30s",
// "`info`", "4 MiB", "`0`: forever") states the TOML value want.
func sameDefault(stated, want string) bool {
	value, _, _ := strings.Cut(stated, ": ")
	value = strings.Trim(value, "`")
	if s, err := strconv.Unquote(want); err == nil {
		return value == s
	}
	if value == want {
		return true
	}
	b, err := iec(want)
	return err == nil && value == b
}
