package environment

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testEnv holds what TestMain prepared for the tests: the path of the
// envprog test program, built once per test binary.
type testEnv struct {
	envprog string
}

// prepared is set once by TestMain, before any test runs, and only read
// after.
var prepared testEnv

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "envprog")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	prepared.envprog = filepath.Join(dir, "envprog")
	build := exec.Command("go", "build", "-o", prepared.envprog, "./testdata/envprog")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building testdata/envprog:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
