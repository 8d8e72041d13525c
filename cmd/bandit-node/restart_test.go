//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunAppliesSchedtrace runs the real binary: with [runtime] schedtrace
// on, `run` restarts itself once with GODEBUG's schedtrace and logs it; off,
// it runs as started. Either way it logs the setting it runs with.
func TestRunAppliesSchedtrace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a daemon")
	}
	dir := t.TempDir()
	bin := buildBinary(t, nil)
	var env []string // the test's environment without GODEBUG
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	for _, tc := range []struct {
		name         string
		on           bool
		wantRestarts int
		wantLog      string
	}{
		{"on", true, 1, `schedtrace=true setting="[runtime] schedtrace" GODEBUG="schedtrace=2147483647"`},
		{"off", false, 0, `schedtrace=false setting="[runtime] schedtrace" GODEBUG=""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodeDir := filepath.Join(dir, tc.name)
			if out, err := exec.Command(bin, "init", "--dir", nodeDir, "--listen", "/ip4/127.0.0.1/tcp/0",
				"--api", "127.0.0.1:0").CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			cfgPath := filepath.Join(nodeDir, "config.toml")
			cfg, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.on {
				cfg = []byte(strings.Replace(string(cfg), "schedtrace = true", "schedtrace = false", 1))
				if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bin, "run", "--config", cfgPath)
			cmd.Env = env
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			restarts, runtimeLine, started := 0, "", false
			timeout := time.After(30 * time.Second)
			for !started {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the daemon exited before it started: %v", cmd.Wait())
					}
					if strings.Contains(l, "restarting with GODEBUG") {
						restarts++
					}
					if strings.Contains(l, `msg="go runtime"`) {
						runtimeLine = l
					}
					started = strings.Contains(l, `msg="node started"`)
				case <-timeout:
					t.Fatal("the daemon did not start within 30 s")
				}
			}
			if restarts != tc.wantRestarts || !strings.Contains(runtimeLine, tc.wantLog) {
				t.Errorf("%d restarts, runtime logged as %q; want %d restarts and %q", restarts, runtimeLine, tc.wantRestarts, tc.wantLog)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			go func() {
				for range lines {
				}
			}()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("the daemon did not stop cleanly on SIGTERM: %v", err)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the daemon did not stop within 30 s of SIGTERM")
			}
		})
	}
}
