package protocol_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces DESIGN.md's import rules: protocol code never
// touches the network, libp2p, or the daemon's packages.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := map[string]string{
		"net":                                    "protocol code does no networking; drivers do",
		"net/http":                               "protocol code does no networking; drivers do",
		"github.com/libp2p/go-libp2p":            "protocol code knows nothing of libp2p",
		"github.com/bandit-node/bandit-node/p2p": "imports point downward: node adapts p2p to protocol",
		"github.com/bandit-node/bandit-node/node": "imports point downward: node drives protocol",
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("protocol/... depends on %s: %s", dep, why)
			}
		}
	}
}
