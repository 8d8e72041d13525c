package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestBackupRestoreRunningDaemon: two daemons run a session; node1 is
// backed up while it runs, stopped, its directory moved away, and restored
// into a fresh config and data directory at other paths, listening on a
// new address. The restored daemon has node1's peer ID and serves the
// earlier session's result and logs through its control API; node2, which
// changed only node1's address in its address book, runs new sessions
// with it.
func TestBackupRestoreRunningDaemon(t *testing.T) {
	root := t.TempDir()
	nodes := initPair(t, root)
	stop1 := startDaemon(t, nodes[0].cfg)
	startDaemon(t, nodes[1].cfg)
	testutil.WaitFor(t, 20*time.Second, "node1 to connect to node2", connectedToOne(t, nodes[0].cfg))

	spec := writeSpec(t, root, "ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 5\n")
	// node1 starts it, so its record holds the session's whole result.
	before, _ := pingSession(t, nodes[0].cfg, spec, "the session before the backup")

	archive := filepath.Join(root, "backups", "node1.tar.gz")
	os.MkdirAll(filepath.Dir(archive), 0o700)
	out, stderr, err := run(t, "backup", "--config", nodes[0].cfg, "--out", archive)
	if err != nil || !strings.Contains(out, "backed up node node1 (peer ID "+nodes[0].id+")") {
		t.Fatalf("backup of the running node1: %v\n%s%s", err, out, stderr)
	}
	if st, err := os.Stat(archive); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the archive: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	out, _, err = run(t, "backup", "--check", archive)
	for _, want := range []string{"a whole backup of node node1", "identity/identity.key", "data/sessions/" + before.Session.ID + ".json", "data/logs/" + before.Session.ID + ".log"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("backup --check: %v, want %q in\n%s", err, want, out)
		}
	}
	if strings.Contains(out, "data/lock") {
		t.Errorf("the archive holds the data directory's lock:\n%s", out)
	}

	// node1's machine is lost: its daemon stops and its directory goes.
	stop1()
	if err := os.Rename(nodes[0].dir, nodes[0].dir+".lost"); err != nil {
		t.Fatal(err)
	}
	newCfg := filepath.Join(root, "newhost", "etc", "bandit-node.toml")
	newData := filepath.Join(root, "newhost", "state")
	out, stderr, err = run(t, "restore", "--config", newCfg, "--data-dir", newData, "--dry-run", archive)
	if err != nil || !strings.Contains(out, filepath.Join(newData, "identity.key")) {
		t.Fatalf("restore --dry-run: %v\n%s%s", err, out, stderr)
	}
	if _, err := os.Stat(newData); !os.IsNotExist(err) {
		t.Fatalf("restore --dry-run wrote the data directory: %v", err)
	}
	out, stderr, err = run(t, "restore", "--config", newCfg, "--data-dir", newData, archive)
	if err != nil || !strings.Contains(out, "restored node node1 with its peer ID "+nodes[0].id) {
		t.Fatalf("restore: %v\n%s%s", err, out, stderr)
	}
	if _, _, err := run(t, "restore", "--config", newCfg, "--data-dir", newData, archive); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a second restore over the first: %v, want a refusal", err)
	}

	// The new machine has another address: the restored config listens
	// on it, and node2 changes only node1's addrs in its address book,
	// then reloads.
	newPort := testutil.FreePort(t)
	for newPort == nodes[0].port || newPort == nodes[1].port {
		newPort = testutil.FreePort(t)
	}
	readdress := func(cfg string) {
		t.Helper()
		text, err := os.ReadFile(cfg)
		old := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d\"", nodes[0].port)
		if err != nil || bytes.Count(text, []byte(old)) != 1 {
			t.Fatalf("%s: %v, or not one %s in it", cfg, err, old)
		}
		text = bytes.Replace(text, []byte(old), fmt.Appendf(nil, "/ip4/127.0.0.1/tcp/%d\"", newPort), 1)
		if err := os.WriteFile(cfg, text, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	readdress(newCfg)
	readdress(nodes[1].cfg)
	reg, err := families.Registry()
	if err != nil {
		t.Fatal(err)
	}
	cfg2, err := config.LoadConfig(nodes[1].cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := client.FromFiles(cfg2.API.Listen, cfg2.API.TokenFile, cfg2.API.TrustFile())
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	if ch, err := c2.Reload(rctx); err != nil || len(ch.PeersReaddressed) != 1 || len(ch.PeersAdded)+len(ch.PeersRemoved) != 0 {
		t.Fatalf("node2's reload with node1's new address: %+v, %v", ch, err)
	}

	startDaemon(t, newCfg)
	out, _, err = run(t, "id", "--config", newCfg)
	if err != nil || !strings.Contains(out, nodes[0].id) {
		t.Errorf("id of the restored node: %v\n%s", err, out)
	}
	testutil.WaitFor(t, 30*time.Second, "node2 to reconnect to the restored node1", connectedToOne(t, nodes[1].cfg))
	// The result from before the backup, served by the restored daemon's
	// API (not read from its files: the daemon must be the one answering).
	out, stderr, err = run(t, "session", "result", "--config", newCfg, before.Session.ID, "--json")
	if err != nil || strings.Contains(stderr, "not running") {
		t.Fatalf("the earlier result from the restored node: %v\n%s%s", err, out, stderr)
	}
	after := testutil.DecodeJSON[apitype.Result](t, []byte(out))
	if after.Session.State != apitype.StateCompleted || !bytes.Equal(after.Result, before.Result) {
		t.Errorf("the restored node serves %+v\nwant the result of before the backup %s", after, before.Result)
	}
	logs, _, err := run(t, "session", "logs", "--config", newCfg, before.Session.ID)
	if err != nil || strings.TrimSpace(logs) == "" {
		t.Errorf("the earlier session's logs from the restored node: %v\n%s", err, logs)
	}
	for _, initiator := range []string{nodes[1].cfg, newCfg} {
		out, stderr, err := run(t, "session", "start", "--config", initiator, spec, "--wait", "--timeout", "2m", "--json")
		if err != nil {
			t.Fatalf("a session after the restore, started by %s: %v\n%s%s", initiator, err, out, stderr)
		}
		if res := testutil.DecodeJSON[apitype.Result](t, []byte(out)); res.Session.State != apitype.StateCompleted {
			t.Errorf("a session after the restore: %+v", res.Session)
		}
	}
}

// TestBackupRestoreErrors: the commands' usage errors, and a damaged
// archive reported as such, with nothing restored.
func TestBackupRestoreErrors(t *testing.T) {
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.tar.gz")
	os.WriteFile(cut, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3}, 0o600)
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"backup", "--out", "a", "--check", "b"}, "exclude each other", 2},
		{[]string{"backup", "--config", "x.toml"}, "--out ARCHIVE", 2},
		{[]string{"restore", cut}, "--config NEWFILE", 2},
		{[]string{"restore", "--config", filepath.Join(dir, "c.toml")}, "", 2},
		{[]string{"backup", "--check", cut}, "the archive is damaged", 1},
		{[]string{"restore", "--config", filepath.Join(dir, "new", "c.toml"), cut}, "the archive is damaged", 1},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil || ExitCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v (exit %d), want exit %d and %q", tc.args, err, ExitCode(err), tc.code, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Errorf("restore of a damaged archive wrote something: %v", err)
	}
}
