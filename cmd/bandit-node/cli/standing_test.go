package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
)

// TestCLIStandingSessions runs two daemons through the CLI, the first with
// a standing session in its config file, and reads its runs with session
// list (--name) and session status.
func TestCLIStandingSessions(t *testing.T) {
	root := t.TempDir()
	nodes := initPair(t, root)
	if err := os.MkdirAll(filepath.Join(nodes[0].dir, "specs"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, filepath.Join(nodes[0].dir, "specs"), "ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 5\n")
	appendConfig(t, nodes[0].cfg, "\n[[sessions]]\nname = \"pinger\"\nspec = \"specs/ping.toml\"\nevery = \"2s\"\nretry = { attempts = 2, backoff = \"1s\" }\n")
	stop := startDaemon(t, nodes[0].cfg)
	startDaemon(t, nodes[1].cfg)
	type listing struct {
		Standing []apitype.Standing `json:"standing"`
		Sessions []apitype.Session  `json:"sessions"`
	}
	var l listing
	testutil.WaitFor(t, 60*time.Second, "two completed runs of pinger", func() bool {
		out, _, err := run(t, "session", "list", "--config", nodes[0].cfg, "--name", "pinger", "--json")
		if err != nil || json.Unmarshal([]byte(out), &l) != nil {
			return false
		}
		completed := 0
		for _, s := range l.Sessions {
			if s.State == apitype.StateCompleted {
				completed++
			}
		}
		return completed >= 2
	})
	if len(l.Standing) != 1 || l.Standing[0].Name != "pinger" || l.Standing[0].Schedule != "every = 2s" || l.Standing[0].NextDue == nil {
		t.Errorf("standing: %+v", l.Standing)
	}
	for _, s := range l.Sessions {
		if s.Name != "pinger" {
			t.Errorf("session list --name pinger lists %s, a run of %q", s.ID, s.Name)
		}
	}
	// An ad-hoc session has no name: it is in the full list, not in
	// pinger's.
	spec := writeSpec(t, root, "adhoc.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 2\n")
	out, stderr, err := run(t, "session", "start", "--config", nodes[0].cfg, spec, "--wait", "--timeout", "2m", "--json")
	if err != nil {
		t.Fatalf("session start: %v\n%s", err, stderr)
	}
	adhoc := testutil.DecodeJSON[apitype.Result](t, []byte(out)).Session.ID
	text, _, err := run(t, "session", "list", "--config", nodes[0].cfg)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "STANDING") || !strings.HasPrefix(lines[1], "pinger") || !strings.Contains(lines[1], "every = 2s") {
		t.Errorf("session list does not begin with the standing sessions:\n%s", text)
	}
	if !strings.Contains(text, adhoc) || !strings.Contains(text, l.Sessions[0].ID+"  pinger") {
		t.Errorf("session list lacks the runs:\n%s", text)
	}
	named, _, err := run(t, "session", "list", "--config", nodes[0].cfg, "--name", "pinger")
	if err != nil || strings.Contains(named, adhoc) || !strings.Contains(named, l.Sessions[0].ID) {
		t.Errorf("session list --name pinger: %v\n%s", err, named)
	}
	// The participant sees the name.
	status, _, err := run(t, "session", "status", "--config", nodes[1].cfg, l.Sessions[0].ID)
	if err != nil || !strings.Contains(status, "name      pinger\n") {
		t.Errorf("session status on node2: %v\n%s", err, status)
	}
	// With the daemon down, the list comes from its data directory: the
	// schedule it stored and its records.
	stop()
	down, stderr, err := run(t, "session", "list", "--config", nodes[0].cfg, "--name", "pinger")
	if err != nil || !strings.Contains(stderr, "the daemon is not running") || !strings.Contains(down, l.Sessions[0].ID) ||
		strings.Contains(down, adhoc) || !strings.Contains(down, "pinger    ping      every = 2s  20") {
		t.Errorf("session list --name pinger, daemon down: %v\n%s\n%s", err, down, stderr)
	}
}
