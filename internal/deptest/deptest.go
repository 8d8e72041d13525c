// Package deptest checks DESIGN.md's import rules from tests: a package may
// not depend, directly or not, on the packages its rules forbid (Forbid), or
// may not import them itself (ForbidDirect).
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t for every dependency of pattern (a go list pattern, run
// from the test's package directory) that is, or lies below, a key of
// forbidden; the value says why. A key ending in "$" forbids that package
// alone, not the packages below it (node$ forbids the daemon's root package
// but not its sub-packages).
func Forbid(t *testing.T, pattern string, forbidden map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", pattern).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range forbidden {
			if matches(dep, bad) {
				t.Errorf("%s depends on %s: %s", pattern, dep, why)
			}
		}
	}
}

// ForbidDirect fails t for every package matched by pattern (a go list
// pattern, run from the test's package directory) that itself imports a
// package that is, or lies below, a key of forbidden; the value says why.
// What the package reaches through the packages it imports is allowed.
func ForbidDirect(t *testing.T, pattern string, forbidden map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			for bad, why := range forbidden {
				if matches(imp, bad) {
					t.Errorf("%s imports %s: %s", pkg, imp, why)
				}
			}
		}
	}
}

// matches reports whether pkg is key, or lies below it unless key ends in
// "$".
func matches(pkg, key string) bool {
	if exact, ok := strings.CutSuffix(key, "$"); ok {
		return pkg == exact
	}
	return pkg == key || strings.HasPrefix(pkg, key+"/")
}
