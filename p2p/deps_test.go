package p2p

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces DESIGN.md's import rules: p2p imports nothing of
// this module (in particular never node).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/bandit-node/bandit-node/") && dep != "github.com/bandit-node/bandit-node/p2p" {
			t.Errorf("p2p depends on %s; it must import nothing of ours", dep)
		}
	}
}
