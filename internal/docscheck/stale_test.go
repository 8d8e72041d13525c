package docscheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stale are statements the docs once made that results/ or the code
// contradict (issue 32): none may come back. why says what is true.
var stale = []struct{ phrase, why string }{
	{"7 min 23 s", "results/samba/samba_results.md: the committed run took 2 min 57 s"},
	{"×18–×166", "results/samba/samba_results.md: SAMBA's overhead is ×16–×155"},
	{"×2.2–×32", "results/samba/samba_results.md: the controller works ×1.86–×25.25 one data owner"},
	{"R² ≥ 0.996", "results/samba/samba_results.md: R² ≥ 0.9989"},
	{"0.15 ms a step", "results/samba/samba_results.md: 0.126–0.256 ms per step"},
	{"just over 5 points", "results/samba/k_sweep/samba_results.md: comp's share holds within 5 points"},
	{"once issue 23 converts BAI", "BAI agents ask their environment (protocol/bai, agent.go's protocol.Query)"},
	{"The README had this as:", "a paste seam"},
}

// TestDocsDropStaleStatements: no README, docs/ or examples/ page makes a
// statement in stale.
func TestDocsDropStaleStatements(t *testing.T) {
	pages := []string{"README.md"}
	for _, dir := range []string{"docs", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				pages = append(pages, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(pages) < 10 {
		t.Fatalf("found only %d pages: %v", len(pages), pages)
	}
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		text := oneLine(string(b))
		for _, s := range stale {
			if containsFigure(text, s.phrase) {
				t.Errorf("%s says %q, which is stale: %s", page, s.phrase, s.why)
			}
		}
	}
}

// containsFigure reports whether text has phrase not followed by a digit
// (R² ≥ 0.996 is stale, R² ≥ 0.9969 may not be).
func containsFigure(text, phrase string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], phrase)
		if j < 0 {
			return false
		}
		end := i + j + len(phrase)
		if end == len(text) || text[end] < '0' || text[end] > '9' {
			return true
		}
		i = end
	}
}
