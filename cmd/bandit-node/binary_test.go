package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildBinary builds the program into dir with the environment's Go
// settings plus env (such as CGO_ENABLED=0) and flags, and returns its
// path.
func buildBinary(t *testing.T, dir string, env []string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(dir, "bandit-node")
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
