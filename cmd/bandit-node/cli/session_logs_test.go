package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// checkSessionLogs reads the logs of the completed session id from two
// running daemons (TestCLIAgainstDaemons, whose daemons log only
// warnings): the initiator's with --config, the other's through
// $BANDIT_NODE_CONFIG, then with --follow, which ends since the session
// has.
func checkSessionLogs(t *testing.T, initiatorCfg, otherCfg, id string) {
	t.Helper()
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARN|ERROR|DEBUG) `)
	check := func(out string, want ...string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines {
			if !line.MatchString(l) {
				t.Errorf("session logs printed %q, not a log line", l)
			}
			if strings.Contains(l, "session="+id) {
				t.Errorf("a line repeats the session: %q", l)
			}
		}
		for _, w := range want {
			if !strings.Contains(out, " "+w) {
				t.Errorf("session logs lacks %q:\n%s", w, out)
			}
		}
	}
	out, stderr, err := run(t, "session", "logs", "--config", initiatorCfg, id)
	if err != nil {
		t.Fatalf("session logs: %v\n%s", err, stderr)
	}
	check(out, "INFO proposed a session", "INFO session completed protocol=ping")

	t.Setenv(configEnv, otherCfg)
	out, stderr, err = run(t, "session", "logs", id)
	if err != nil {
		t.Fatalf("session logs with %s: %v\n%s", configEnv, err, stderr)
	}
	check(out, "INFO accepted a session", "INFO session completed protocol=ping")
	followed, _, err := run(t, "session", "logs", id, "--follow")
	if err != nil || followed != out {
		t.Errorf("session logs --follow of an ended session: %v\n%s\nwant\n%s", err, followed, out)
	}
	if _, _, err := run(t, "session", "logs", "00000000deadbeef"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("logs of an unknown session: %v", err)
	}
}

// TestSessionLogsFollow follows a session whose log grows while it runs,
// against a stand-in control API: every line is printed once, in order,
// with the lines the daemon no longer kept counted, and the command ends
// once the session has.
func TestSessionLogsFollow(t *testing.T) {
	const id = "0123456789abcdef"
	all := []string{"l0", "l1", "l2", "l3", "l4", "l5"}
	var mu sync.Mutex
	polls := 0 // session polls so far; the log grows by one line at each
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0/sessions/"+id, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		polls++
		state := apitype.StateRunning
		if 2+polls >= len(all) {
			state = apitype.StateCompleted
		}
		json.NewEncoder(w).Encode(apitype.Session{ID: id, State: state})
	})
	mux.HandleFunc("GET /v0/sessions/"+id+"/logs", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
		written := min(3+polls, len(all))
		// The daemon keeps only the last 2 lines it wrote.
		first := int64(written - 2)
		v := apitype.SessionLogs{First: max(first, since), Next: int64(written), Lines: []string{}}
		if since < first {
			v.Dropped = first - since
		}
		v.Lines = append(v.Lines, all[v.First:written]...)
		json.NewEncoder(w).Encode(v)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	dir := filepath.Join(t.TempDir(), "node1")
	if _, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0", "--api", strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "session", "logs", "--config", filepath.Join(dir, "config.toml"), id, "--follow")
	if err != nil {
		t.Fatalf("session logs --follow: %v\n%s", err, stderr)
	}
	want := "(1 earlier lines are no longer kept)\nl1\nl2\nl3\nl4\nl5\n"
	if out != want {
		t.Errorf("printed\n%s\nwant\n%s", out, want)
	}
}
