package configexample

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestExampleIsGenerated: the committed config.example.toml is what its
// template writes with the daemon's defaults, so that a default changed in
// config.DefaultConfig (or the typed defaults it uses) cannot leave the
// operator's reference stating the old one.
func TestExampleIsGenerated(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := Render(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(text, committed) {
		return
	}
	got, want := strings.Split(string(committed), "\n"), strings.Split(string(text), "\n")
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("config.example.toml line %d is\n\t%s\nbut its template and the defaults (Defaults) write\n\t%s\n"+
				"edit cmd/internal/configexample/config.example.toml.tmpl, not the example, then run `go generate .` at the repository's root", i+1, got[i], want[i])
		}
	}
	t.Fatalf("config.example.toml has %d lines, its template writes %d: run `go generate .` at the repository's root", len(got), len(want))
}

// TestExampleTakesDefaultsFromNode: every default the example sets comes
// from config.DefaultValues, none is a literal, and every key with a
// default is in the example, set or (with no value to give) commented out.
func TestExampleTakesDefaultsFromNode(t *testing.T) {
	defaults := Defaults()
	poisoned, err := Poison(defaults)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Render(poisoned)
	if err != nil {
		t.Fatal(err)
	}
	found, err := Follows(text, poisoned)
	if err != nil {
		t.Fatal(err)
	}
	for key := range defaults {
		table, name, _ := strings.Cut(key, ".")
		if table == "local" || table == "sessions" || slices.Contains(found, key) {
			continue // the environments' and retry's defaults are in the text
		}
		commented := regexp.MustCompile(`(?m)^# ` + regexp.QuoteMeta(name) + ` = `)
		if !commented.Match(text) {
			t.Errorf("%s: has a default (%s) but config.example.toml neither sets nor mentions it", key, defaults[key])
		}
	}
}

// TestPoisonedTextsDiffer: Poison changes every value, or
// TestExampleTakesDefaultsFromNode could not see a literal.
func TestPoisonedTextsDiffer(t *testing.T) {
	defaults := Defaults()
	poisoned, err := Poison(defaults)
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range defaults {
		if poisoned[key] == v {
			t.Errorf("%s: poisoned value %s is the default", key, v)
		}
	}
}

func TestIEC(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1073741824", "1 GiB"}, {"67108864", "64 MiB"}, {"1024", "1 KiB"}, {"1000", "1000 bytes"}, {"0", "0 bytes"},
	}
	for _, tt := range tests {
		if got, err := iec(tt.in); err != nil || got != tt.want {
			t.Errorf("iec(%s) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := iec(`"1s"`); err == nil {
		t.Error(`iec("1s"): no error`)
	}
}
