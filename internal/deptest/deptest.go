// Package deptest checks DESIGN.md's import rules from tests: a package may
// not depend, directly or not, on the packages its rules forbid.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t for every dependency of pattern (a go list pattern, run
// from the test's package directory) that is, or lies below, a key of
// forbidden; the value says why.
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
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("%s depends on %s: %s", pattern, dep, why)
			}
		}
	}
}
