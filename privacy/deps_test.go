package privacy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces DESIGN.md: privacy imports nothing of ours and
// does no networking.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net" || strings.HasPrefix(dep, "github.com/libp2p/") ||
			(strings.HasPrefix(dep, "github.com/bandit-node/bandit-node/") && dep != "github.com/bandit-node/bandit-node/privacy") {
			t.Errorf("privacy depends on %s", dep)
		}
	}
}
