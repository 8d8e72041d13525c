package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// binaries holds the programs the tests built, by their build settings:
// each is built once per test binary and shared, since the tests only run
// it. TestMain removes their directory.
var binaries struct {
	sync.Mutex
	dir   string
	paths map[string]string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// buildBinary builds the program with the environment's Go settings plus
// env (such as CGO_ENABLED=0) and flags, once per test binary for the same
// env and flags, and returns its path. The tests run it, never change it.
func buildBinary(t *testing.T, env []string, flags ...string) string {
	t.Helper()
	binaries.Lock()
	defer binaries.Unlock()
	key := strings.Join(env, "\x00") + "\x01" + strings.Join(flags, "\x00")
	if bin, ok := binaries.paths[key]; ok {
		return bin
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "bandit-node-test-bin")
		if err != nil {
			t.Fatal(err)
		}
		binaries.dir, binaries.paths = dir, map[string]string{}
	}
	bin := filepath.Join(binaries.dir, fmt.Sprint(len(binaries.paths)), "bandit-node")
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	binaries.paths[key] = bin
	return bin
}
