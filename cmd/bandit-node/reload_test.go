//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
)

// TestSIGHUPReloadsTheConfig runs the real binary: `peers add` reads a card
// from stdin and has the running daemon reload; SIGHUP reloads an edited
// config, and a config it refuses is logged at error level with the reason
// while the old address book stays in force.
func TestSIGHUPReloadsTheConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a daemon")
	}
	dir := t.TempDir()
	bin := buildBinary(t, nil)
	cfgs := make([]string, 3)
	for i := range cfgs {
		nodeDir := filepath.Join(dir, fmt.Sprintf("node%d", i+1))
		if out, err := exec.Command(bin, "init", "--dir", nodeDir, "--name", fmt.Sprintf("node%d", i+1),
			"--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", testutil.FreePort(t)),
			"--api", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))).CombinedOutput(); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		cfgs[i] = filepath.Join(nodeDir, "config.toml")
	}
	card := func(cfg string) string {
		out, err := exec.Command(bin, "id", "--config", cfg, "--peer-card").Output()
		if err != nil {
			t.Fatalf("id --peer-card: %v", err)
		}
		return string(out)
	}
	card2, card3 := card(cfgs[1]), card(cfgs[2])

	cmd := exec.Command(bin, "run", "--config", cfgs[0])
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	// waitLine waits for a log line holding every one of want.
	waitLine := func(what string, want ...string) string {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the daemon exited while waiting for %s: %v", what, cmd.Wait())
				}
				all := true
				for _, w := range want {
					all = all && strings.Contains(l, w)
				}
				if all {
					return l
				}
			case <-timeout:
				t.Fatalf("no log line of %s within 30 s", what)
			}
		}
	}
	waitLine("the start", `msg="node started"`)

	add := exec.Command(bin, "peers", "add", "--config", cfgs[0], "-")
	add.Stdin = strings.NewReader(card2)
	if out, err := add.CombinedOutput(); err != nil || !strings.Contains(string(out), "peers added: node2") {
		t.Fatalf("peers add - : %v\n%s", err, out)
	}
	waitLine("the reload by peers add", `msg="config reloaded"`, "peers added: node2")

	appendTo := func(text string) {
		f, err := os.OpenFile(cfgs[0], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("\n" + text); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(card3)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLine("the reload by SIGHUP", `msg="config reloaded"`, "peers added: node3")

	appendTo("[bogus]\nx = 1\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLine("the refused reload", "level=ERROR", "config reload refused", "unknown key bogus")
	out, err := exec.Command(bin, "peers", "--config", cfgs[0]).Output()
	if err == nil {
		t.Fatalf("peers with the broken config file: want its error, got\n%s", out)
	}
	// The daemon still runs on its old config: its API answers a client
	// that reads a good config of the same node.
	// (The same node's config without the broken table, beside it.)
	good := filepath.Join(filepath.Dir(cfgs[0]), "good.toml")
	text, _ := os.ReadFile(cfgs[0])
	goodText := strings.Replace(string(text), "\n[bogus]\nx = 1\n", "", 1)
	if err := os.WriteFile(good, []byte(goodText), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "peers", "--config", good).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "node2") || !strings.Contains(string(out), "node3") {
		t.Errorf("peers after the refused reload: %v\n%s", err, out)
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
		stopped = true
		if err != nil {
			t.Errorf("the daemon did not stop cleanly on SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop within 30 s of SIGTERM")
	}
}
