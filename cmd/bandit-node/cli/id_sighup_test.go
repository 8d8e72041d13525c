//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/client"
)

// A daemon whose config file is cut short inside [node] and reloaded with
// SIGHUP refuses it and keeps running; `id` then shows the refusal and its
// reason, and the daemon's log the startup warning and the refusal.
func TestIDShowsARefusedReload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acme")
	port, api := testutil.FreePort(t), testutil.FreePort(t)
	for api == port {
		api = testutil.FreePort(t)
	}
	if _, _, err := run(t, "init", "--dir", dir, "--name", "acme", "--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port),
		"--api", fmt.Sprintf("127.0.0.1:%d", api)); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var daemonLog bytes.Buffer // written by the daemon, read once it stopped
	done := make(chan error, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", cfg}, &bytes.Buffer{}, &daemonLog) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
		}
	}
	defer stop()
	token, err := os.ReadFile(filepath.Join(dir, "api.token"))
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(fmt.Sprintf("127.0.0.1:%d", api), strings.TrimSpace(string(token)))
	testutil.WaitFor(t, 20*time.Second, "the daemon to answer", func() bool {
		_, err := c.Node(ctx)
		return err == nil
	})

	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(good, []byte("\nlisten = ["))
	if err := os.WriteFile(cfg, good[:cut+1], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the SIGHUP reload to be refused", func() bool {
		info, err := c.Node(ctx)
		return err == nil && info.LastReload != nil
	})
	if err := os.WriteFile(cfg, good, 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "id", "--config", cfg)
	if err != nil {
		t.Fatalf("id: %v\n%s", err, stderr)
	}
	for _, want := range []string{"name:    acme\n", "warning: no [[peers]]: this node can connect to no organization",
		"last reload: refused at ", ": the new config is refused, the running one stays in force: ", "node.listen: missing, and there is no default"} {
		if !strings.Contains(out, want) {
			t.Errorf("id printed\n%s\nwant %q in it", out, want)
		}
	}
	stop()
	for _, want := range []string{`level=WARN msg="no [[peers]]: this node can connect to no organization`,
		`level=ERROR msg="SIGHUP: config reload refused"`} {
		if !strings.Contains(daemonLog.String(), want) {
			t.Errorf("the daemon's log lacks %q:\n%s", want, daemonLog.String())
		}
	}
}
