//go:build unix

package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMetricsListenerOfTheBinary runs the real binary with [metrics] on:
// curl-like GETs of /metrics, /healthz and /readyz on the metrics listener
// answer without a token, /metrics carries the build's version, and the
// control API still refuses /metrics without its token.
func TestMetricsListenerOfTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a daemon")
	}
	dir := t.TempDir()
	bin := buildBinary(t, nil)
	nodeDir := filepath.Join(dir, "node")
	if out, err := exec.Command(bin, "init", "--dir", nodeDir, "--listen", "/ip4/127.0.0.1/tcp/0",
		"--api", "127.0.0.1:0").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(nodeDir, "config.toml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// A node without peers is ready with min_peers = 0.
	text := regexp.MustCompile(`(?m)^listen = "" .*$`).ReplaceAllString(string(cfg), `listen = "127.0.0.1:0"`)
	text = regexp.MustCompile(`(?m)^min_peers = 1 .*$`).ReplaceAllString(text, `min_peers = 0`)
	text = strings.Replace(text, "schedtrace = true", "schedtrace = false", 1)
	if !strings.Contains(text, `listen = "127.0.0.1:0"`) || !strings.Contains(text, "min_peers = 0") {
		t.Fatalf("init's config has no [metrics] table to turn on:\n%s", cfg)
	}
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "run", "--config", cfgPath)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("the daemon did not stop within 30 s of SIGTERM")
		}
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	addr := regexp.MustCompile(`\blisten=(127\.0\.0\.1:[0-9]+)`)
	api := regexp.MustCompile(`\bapi=(127\.0\.0\.1:[0-9]+)`)
	var metricsAddr, apiAddr string
	timeout := time.After(30 * time.Second)
	for metricsAddr == "" || apiAddr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the daemon exited before it started: %v", cmd.Wait())
			}
			if m := addr.FindStringSubmatch(l); m != nil && strings.Contains(l, `msg="metrics listener started"`) {
				metricsAddr = m[1]
			}
			if m := api.FindStringSubmatch(l); m != nil && strings.Contains(l, `msg="node started"`) {
				apiAddr = m[1]
			}
		case <-timeout:
			t.Fatal("the daemon did not log its metrics listener and API within 30 s")
		}
	}
	go func() {
		for range lines {
		}
	}()

	get := func(url string) (int, string) {
		t.Helper()
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		url  string
		code int
		want string
	}{
		{"http://" + metricsAddr + "/metrics", 200, `version="0.1.0-dev"`},
		{"http://" + metricsAddr + "/healthz", 200, "ok"},
		{"http://" + metricsAddr + "/readyz", 200, "ok"},
		{"http://" + apiAddr + "/metrics", 401, "missing or wrong bearer token"},
	} {
		code, body := get(tc.url)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d %.200q, want %d with %q", tc.url, code, body, tc.code, tc.want)
		}
	}
}
