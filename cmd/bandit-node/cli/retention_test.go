package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/internal/testutil"
)

// session list shows, under a standing session, the summary of its runs
// that the retention policy removed (here read from the data directory,
// the daemon being down).
func TestCLIListShowsRemovedRunsSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "node1")
	if _, _, err := run(t, "init", "--dir", dir, "--name", "node1", "--policy-open",
		"--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", testutil.FreePort(t)), "--api", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 1\n")
	cfg := filepath.Join(dir, "config.toml")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[[peers]]\nname = \"node2\"\npeer_id = \"12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx\"\n\n[[sessions]]\nname = \"pinger\"\nspec = \"ping.toml\"\nevery = \"1h\"\n")
	f.Close()
	summary := `{"pinger": {"runs": 7, "completed": 5, "aborted": 2, "first": "2026-01-01T00:00:00Z",
		"last": "2026-01-02T00:00:00Z", "last_id": "00000000000000a7", "last_result_sha256": "ab12"}}`
	if err := os.WriteFile(filepath.Join(dir, "session-summaries.json"), []byte(summary), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "session", "list", "--config", cfg)
	if err != nil || !strings.Contains(stderr, "the daemon is not running") {
		t.Fatalf("session list: %v\n%s", err, stderr)
	}
	if want := "pinger: 7 earlier runs removed by the retention policy (5 completed, 2 aborted"; !strings.Contains(out, want) ||
		!strings.Contains(out, "last 00000000000000a7, result sha256 ab12") {
		t.Errorf("session list:\n%s\nwant a line with %q", out, want)
	}
}
