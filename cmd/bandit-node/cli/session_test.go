package cli

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// fakeAPI serves the control-API routes of one session in the given state
// and returns the config.toml of a node directory pointing at it.
func fakeAPI(t *testing.T, s apitype.Session) string {
	t.Helper()
	result := apitype.Result{Session: s}
	if s.State == apitype.StateCompleted {
		result.Result = json.RawMessage(`{"answer":42}`)
	}
	mux := http.NewServeMux()
	reply := func(v any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				http.Error(w, `{"error":"no token"}`, http.StatusUnauthorized)
				return
			}
			json.NewEncoder(w).Encode(v)
		}
	}
	mux.HandleFunc("POST /v0/sessions", reply(apitype.Session{ID: s.ID, Protocol: s.Protocol, State: apitype.StateProposed}))
	mux.HandleFunc("GET /v0/sessions/"+s.ID, reply(s))
	mux.HandleFunc("GET /v0/sessions/"+s.ID+"/result", reply(result))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	dir := filepath.Join(t.TempDir(), "node1")
	if _, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0", "--api", strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "config.toml")
}

// TestAbortedSessionExitCode checks that session result and status --watch,
// like session start --wait, print the record of an aborted session and
// exit 3, and exit 0 for a completed one.
func TestAbortedSessionExitCode(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := filepath.Join(repoRoot, "examples", "ping.toml")
	if _, err := os.Stat(spec); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		state, reason string
		exit          int
	}{
		{apitype.StateAborted, "node2 declined: protocol ping is not enabled here", 3},
		{apitype.StateCompleted, "", 0},
	} {
		s := apitype.Session{ID: "3f2a9c0e1b7d4e55", Protocol: "ping", Initiator: "node1", State: tt.state, Reason: tt.reason,
			Roles: map[string][]string{"participant": {"node1", "node2"}}, Created: created}
		cfg := fakeAPI(t, s)
		for _, c := range []struct {
			name string
			args []string
		}{
			{"result", []string{"session", "result", "--config", cfg, s.ID}},
			{"result --json", []string{"session", "result", "--config", cfg, s.ID, "--json"}},
			{"start --wait", []string{"session", "start", "--config", cfg, spec, "--wait"}},
			{"start --wait --json", []string{"session", "start", "--config", cfg, spec, "--wait", "--json"}},
			{"status --watch", []string{"session", "status", "--config", cfg, s.ID, "--watch"}},
		} {
			t.Run(tt.state+" "+c.name, func(t *testing.T) {
				out, _, err := run(t, c.args...)
				if code := ExitCode(err); (err == nil && tt.exit != 0) || (err != nil && code != tt.exit) {
					t.Errorf("err = %v (exit %d), want exit %d", err, code, tt.exit)
				}
				if tt.exit == 3 && (err == nil || !strings.Contains(err.Error(), tt.reason)) {
					t.Errorf("err = %v, want the reason %q", err, tt.reason)
				}
				if !strings.Contains(out, s.ID) || !strings.Contains(out, tt.state) {
					t.Errorf("the record was not printed:\n%s", out)
				}
			})
		}
	}
}

// TestWaitTimeout: a session that runs on beyond --timeout ends session
// start --wait and status --watch with exit code 4 and how to follow it,
// within about the timeout; --timeout without the wait it bounds, or
// negative, is a usage error.
func TestWaitTimeout(t *testing.T) {
	s := apitype.Session{ID: "3f2a9c0e1b7d4e55", Protocol: "ping", Initiator: "node1", State: apitype.StateRunning,
		Roles: map[string][]string{"participant": {"node1", "node2"}}, Created: time.Now()}
	cfg := fakeAPI(t, s)
	spec := filepath.Join(repoRoot, "examples", "ping.toml")
	for _, tt := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"session", "start", "--config", cfg, spec, "--wait", "--timeout", "300ms"}, 4, "gave up waiting for session 3f2a9c0e1b7d4e55 after 300ms (--timeout): it goes on at the daemon"},
		{[]string{"session", "status", "--config", cfg, s.ID, "--watch", "--timeout", "300ms"}, 4, "gave up waiting for session 3f2a9c0e1b7d4e55 after 300ms"},
		{[]string{"session", "start", "--config", cfg, spec, "--timeout", "1s"}, 2, "--timeout bounds --wait, which was not given"},
		{[]string{"session", "status", "--config", cfg, s.ID, "--timeout", "1s"}, 2, "--timeout bounds --watch, which was not given"},
		{[]string{"session", "start", "--config", cfg, spec, "--wait", "--timeout", "-1s"}, 2, "a wait cannot be negative"},
	} {
		start := time.Now()
		_, _, err := run(t, tt.args...)
		if err == nil || ExitCode(err) != tt.exit || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v (exit %d), want exit %d and %q", tt.args[1:2], err, ExitCode(err), tt.exit, tt.want)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("%v took %v", tt.args, took)
		}
	}
}

// TestSessionCommandsReadStoredRecordsWhenDown: with no daemon at the
// control API, session result, status and list read the records in the
// data directory and say so on stderr; an unknown session is still an error.
func TestSessionCommandsReadStoredRecordsWhenDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	api := ln.Addr().String()
	ln.Close() // nothing listens there now
	dir := filepath.Join(t.TempDir(), "node1")
	if _, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0", "--api", api); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	const id = "0123456789abcdef"
	rec := `{"session":{"id":"` + id + `","protocol":"ping","initiator":"node1","state":"completed","created":"2026-11-23T01:00:00Z","spec":"protocol = \"ping\""},"result":{"answer":42}}`
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions", id+".json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"session", "result", "--config", cfg, id, "--json"}, `"answer": 42`},
		{[]string{"session", "status", "--config", cfg, id}, "state     completed"},
		{[]string{"session", "list", "--config", cfg}, id},
	} {
		out, errOut, err := run(t, c.args...)
		if err != nil || !strings.Contains(out, c.want) || !strings.Contains(errOut, "the daemon is not running") {
			t.Errorf("%v: err %v, stdout %q, stderr %q; want %q and a word that the daemon is down", c.args, err, out, errOut, c.want)
		}
	}
	if _, _, err := run(t, "session", "result", "--config", cfg, "fedcba9876543210"); err == nil || !strings.Contains(err.Error(), "no such session") {
		t.Errorf("an unknown session while the daemon is down: %v", err)
	}
}

// TestPrintSessionEnvironments: session status and result show what the
// organization's own environments did, and a starved one's warning.
func TestPrintSessionEnvironments(t *testing.T) {
	var b strings.Builder
	printSession(&b, apitype.Session{ID: "x", State: apitype.StateCompleted, Environments: map[string]apitype.EnvironmentUse{
		"agent[1]": {Source: "http", Unanswered: 1, Warning: "agent[1]'s environment (http) answered none of the 1 queries its role asked"},
		"agent[0]": {Source: "exec", Queries: 40, Seconds: 0.25, MaxMillis: 12.5},
	}})
	want := "environment agent[0]: exec answered 40 queries in 0.250 s (the longest 12.5 ms)\n" +
		"environment agent[1]: http answered 0 queries in 0.000 s (the longest 0.0 ms), 1 unanswered\n" +
		"  warning: agent[1]'s environment (http) answered none of the 1 queries its role asked\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("printSession:\n%s\nwant it to end with:\n%s", b.String(), want)
	}
}
