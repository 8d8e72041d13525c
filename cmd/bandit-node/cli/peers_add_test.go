package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
)

// TestPeersAddJoinsRunningDaemons: two running daemons that do not know
// each other exchange peer cards (id --peer-card, peers add), reload without
// a restart and run a session together. peers add refuses a duplicate and
// a node's own card, and saves a card for a daemon that is not running.
// TestPeersAddJoinsRunningDaemons: peers add, then peers remove, on running
// daemons: the card joins two nodes that run a session; its removal parts
// them for good.
func TestPeersAddJoinsRunningDaemons(t *testing.T) {
	root := t.TempDir()
	used := map[int]bool{}
	distinctPort := func() int {
		p := testutil.FreePort(t)
		for used[p] {
			p = testutil.FreePort(t)
		}
		used[p] = true
		return p
	}
	cfgs := make([]string, 3)
	for i := range cfgs {
		dir := filepath.Join(root, fmt.Sprintf("node%d", i+1))
		if _, _, err := run(t, "init", "--dir", dir, "--name", fmt.Sprintf("node%d", i+1), "--policy-open",
			"--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", distinctPort()), "--api", fmt.Sprintf("127.0.0.1:%d", distinctPort())); err != nil {
			t.Fatal(err)
		}
		cfgs[i] = filepath.Join(dir, "config.toml")
	}
	for _, c := range cfgs[:2] { // node3's daemon never runs
		startDaemon(t, c)
	}
	cards := make([]string, 3)
	for i, c := range cfgs {
		testutil.WaitFor(t, 20*time.Second, "the peer card of "+c, func() bool {
			out, _, err := run(t, "id", "--config", c, "--peer-card")
			cards[i] = filepath.Join(root, fmt.Sprintf("node%d.card", i+1))
			return err == nil && os.WriteFile(cards[i], []byte(out), 0o644) == nil
		})
	}
	for _, c := range cfgs[:2] {
		waitServing(t, c)
	}
	before, err := os.ReadFile(cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cfg, card, want string }{
		{cfgs[0], cards[1], "the daemon reloaded its config: peers added: node2"},
		{cfgs[1], cards[0], "the daemon reloaded its config: peers added: node1"},
		{cfgs[2], cards[0], "the daemon is not running"},
	} {
		out, stderr, err := run(t, "peers", "add", "--config", tc.cfg, tc.card)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Fatalf("peers add %s: %v\n%s%s", tc.card, err, out, stderr)
		}
	}
	after, err := os.ReadFile(cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) || !bytes.Contains(after, []byte("# Peer card of node2")) {
		t.Errorf("node1's config was not appended to, comments and all:\n%s", after)
	}
	if st, err := os.Stat(cfgs[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("node1's config: %v, mode %v, want 0600 kept", err, st.Mode().Perm())
	}
	if saved, err := os.ReadFile(cfgs[2]); err != nil || !bytes.Contains(saved, []byte("name = \"node1\"")) {
		t.Errorf("the card for the stopped node3 was not saved: %v", err)
	}

	testutil.WaitFor(t, 20*time.Second, "node1 to connect to node2", func() bool {
		out, _, err := run(t, "peers", "--config", cfgs[0], "--json")
		var peers []apitype.Peer
		return err == nil && json.Unmarshal([]byte(out), &peers) == nil && len(peers) == 1 && peers[0].Connected
	})
	spec := writeSpec(t, root, "ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 5\n")
	if out, stderr, err := run(t, "session", "start", "--config", cfgs[1], spec, "--wait", "--timeout", "2m", "--json"); err != nil {
		t.Fatalf("a session between the daemons that met by peers add: %v\n%s%s", err, out, stderr)
	}

	for _, tc := range []struct{ name, cfg, card, want string }{
		{"duplicate", cfgs[0], cards[1], "already has a peer named \"node2\""},
		{"own card", cfgs[0], cards[0], "this node's own name"},
	} {
		if _, _, err := run(t, "peers", "add", "--config", tc.cfg, tc.card); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: peers add: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if again, _ := os.ReadFile(cfgs[0]); !bytes.Equal(again, after) {
		t.Error("a refused card changed the config")
	}

	// peers remove takes node2 out of node1's address book: the file is as
	// it was before the card, node1 disconnects node2 and refuses it, so
	// node2 — which still lists node1 and keeps dialing — stays apart.
	if _, _, err := run(t, "peers", "remove", "--config", cfgs[0], "node9"); err == nil || !strings.Contains(err.Error(), `no peer named "node9"`) {
		t.Errorf("peers remove of an unknown name: %v", err)
	}
	out, stderr, err := run(t, "peers", "remove", "--config", cfgs[0], "node2")
	if err != nil || !strings.Contains(out, "the daemon reloaded its config: peers removed: node2") {
		t.Fatalf("peers remove node2: %v\n%s%s", err, out, stderr)
	}
	if removed, _ := os.ReadFile(cfgs[0]); !bytes.Equal(bytes.TrimRight(removed, "\n"), bytes.TrimRight(before, "\n")) {
		t.Errorf("node1's config after peers remove is not what it was before peers add:\n%s", removed)
	}
	connected := func(cfg string) bool {
		out, _, err := run(t, "peers", "--config", cfg, "--json")
		var peers []apitype.Peer
		if err != nil || json.Unmarshal([]byte(out), &peers) != nil {
			return true
		}
		for _, p := range peers {
			if p.Connected {
				return true
			}
		}
		return false
	}
	testutil.WaitFor(t, 20*time.Second, "node1 and node2 to be apart", func() bool { return !connected(cfgs[0]) && !connected(cfgs[1]) })
	time.Sleep(3 * time.Second) // node2's redials, with backoff, must keep failing
	if connected(cfgs[1]) {
		t.Error("node2 reconnected to node1 after node1 removed it")
	}
	if _, _, err := run(t, "session", "start", "--config", cfgs[1], spec, "--wait", "--timeout", "20s"); err == nil {
		t.Error("a session with a removed peer started")
	}
}
