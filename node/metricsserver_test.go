package node

import (
	"bufio"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/ping"
)

// httpDo sends a request without a body to url, with the bearer token
// when token is not "", and returns the status and body.
func httpDo(t testing.TB, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
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

// scrape gets /metrics from the metrics listener of tn, without a token,
// and returns its samples keyed as the text format writes them:
// `name{label="value",...}` (labels sorted by name).
func scrape(t testing.TB, tn *testNode) map[string]float64 {
	t.Helper()
	code, body := httpDo(t, http.MethodGet, "http://"+tn.MetricsAddr()+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics on the metrics listener: %d %s", code, body)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

// readyz returns the status and body of /readyz on tn's metrics listener.
func readyz(t testing.TB, tn *testNode) (int, string) {
	t.Helper()
	return httpDo(t, http.MethodGet, "http://"+tn.MetricsAddr()+"/readyz", "")
}

// TestMetricsListener: the metrics listener serves /metrics, /healthz and
// /readyz without a token and nothing else, while the control API still
// refuses /metrics without its token.
func TestMetricsListener(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Metrics = config.MetricsConfig{Listen: "127.0.0.1:0", MinPeers: 1}
		}
	})
	tn := nodes[0]
	if nodes[1].MetricsAddr() != "" {
		t.Errorf("node2 has no [metrics] listen, yet serves metrics on %s", nodes[1].MetricsAddr())
	}
	metricsURL, apiURL := "http://"+tn.MetricsAddr(), "http://"+tn.APIAddr()
	token := strings.Repeat("t", 32)
	tests := []struct {
		name, method, url, token string
		code                     int
		body                     string // a substring of the body
	}{
		{"metrics without a token", "GET", metricsURL + "/metrics", "", 200, `bandit_peer_connected{peer="node2"} 1`},
		{"metrics HEAD", "HEAD", metricsURL + "/metrics", "", 200, ""},
		{"healthz", "GET", metricsURL + "/healthz", "", 200, "ok\n"},
		{"healthz HEAD", "HEAD", metricsURL + "/healthz", "", 200, ""},
		{"readyz", "GET", metricsURL + "/readyz", "", 200, "ok\n"},
		{"admin API metrics without the token", "GET", apiURL + "/metrics", "", 401, "missing or wrong bearer token"},
		{"admin API metrics with it", "GET", apiURL + "/metrics", token, 200, "bandit_build_info"},
		{"POST metrics", "POST", metricsURL + "/metrics", "", 405, ""},
		{"PUT readyz", "PUT", metricsURL + "/readyz", "", 405, ""},
		{"DELETE healthz", "DELETE", metricsURL + "/healthz", "", 405, ""},
		{"no sessions route", "GET", metricsURL + "/v0/sessions", "", 404, ""},
		{"no session start, even with the token", "POST", metricsURL + "/v0/sessions", token, 404, ""},
		{"no cancel", "POST", metricsURL + "/v0/sessions/0011223344556677/cancel", token, 404, ""},
		{"no profiles", "GET", metricsURL + "/debug/pprof/", token, 404, ""},
		{"no root", "GET", metricsURL + "/", "", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := httpDo(t, tt.method, tt.url, tt.token)
			if code != tt.code || !strings.Contains(body, tt.body) {
				t.Errorf("%s %s: %d %q, want %d with %q", tt.method, tt.url, code, body, tt.code, tt.body)
			}
		})
	}
	// One build: its Go version, its revision (test binaries carry none)
	// and the version WithVersion gave ("dev" by default).
	var builds []string
	for key, v := range scrape(t, tn) {
		if strings.HasPrefix(key, "bandit_build_info{") {
			builds = append(builds, key)
			if !strings.HasPrefix(key, `bandit_build_info{goversion="`+runtime.Version()+`",revision="`) ||
				!strings.HasSuffix(key, `",version="dev"}`) || v != 1 {
				t.Errorf("%s = %v, want the Go version %s, version dev and 1", key, v, runtime.Version())
			}
		}
	}
	if len(builds) != 1 {
		t.Errorf("bandit_build_info series: %v, want one", builds)
	}
}

// TestReadyzFlipsAsPeersConnect: /readyz answers 503 with the reason while
// fewer than metrics.min_peers address-book peers are connected, 200 once
// they are, and 503 again when one goes; bandit_peer_connected and
// bandit_ready follow.
func TestReadyzFlipsAsPeersConnect(t *testing.T) {
	cfgs := testConfigs(t, 2)
	cfgs[0].Metrics = config.MetricsConfig{Listen: "127.0.0.1:0", MinPeers: 1}
	n1 := startNode(t, cfgs[0])
	code, body := readyz(t, n1)
	if want := "not ready: 0 of the 1 address-book peers connected, fewer than metrics.min_peers = 1\n"; code != http.StatusServiceUnavailable || body != want {
		t.Fatalf("/readyz alone: %d %q, want 503 %q", code, body, want)
	}
	if code, body := httpDo(t, http.MethodGet, "http://"+n1.MetricsAddr()+"/healthz", ""); code != http.StatusOK {
		t.Errorf("/healthz alone: %d %q, want 200: the process is alive", code, body)
	}
	if got := scrape(t, n1); got[`bandit_peer_connected{peer="node2"}`] != 0 || got["bandit_ready"] != 0 {
		t.Errorf("before node2 started: node2 connected = %v, ready = %v, want 0 and 0", got[`bandit_peer_connected{peer="node2"}`], got["bandit_ready"])
	}

	n2 := startNode(t, cfgs[1])
	testutil.WaitFor(t, 20*time.Second, "/readyz to answer 200 once node2 is connected", func() bool {
		code, _ := readyz(t, n1)
		return code == http.StatusOK
	})
	if got := scrape(t, n1); got[`bandit_peer_connected{peer="node2"}`] != 1 || got["bandit_ready"] != 1 {
		t.Errorf("while /readyz says ready: node2 connected = %v, ready = %v, want 1 and 1", got[`bandit_peer_connected{peer="node2"}`], got["bandit_ready"])
	}

	n2.stop()
	testutil.WaitFor(t, 20*time.Second, "/readyz to answer 503 once node2 is gone", func() bool {
		code, _ := readyz(t, n1)
		return code == http.StatusServiceUnavailable
	})
	if got := scrape(t, n1); got[`bandit_peer_connected{peer="node2"}`] != 0 || got["bandit_ready"] != 0 {
		t.Errorf("after node2 stopped: node2 connected = %v, ready = %v, want 0 and 0", got[`bandit_peer_connected{peer="node2"}`], got["bandit_ready"])
	}
}

// TestSessionMetrics: after sessions complete and abort, the metrics
// listener shows their durations by protocol and outcome, their aborts by
// class, the sessions by state while one runs, and their messages by
// protocol.
func TestSessionMetrics(t *testing.T) {
	nodes := startNetwork(t, 3, func(i int, cfg *config.Config) {
		switch i {
		case 0:
			cfg.Metrics = config.MetricsConfig{Listen: "127.0.0.1:0", MinPeers: 2}
		case 2:
			cfg.Policy = map[string]config.PolicyConfig{} // node3 declines ping
		}
	})
	tn := nodes[0]
	before := scrape(t, tn)
	for _, key := range []string{
		`bandit_session_aborts_total{class="declined",protocol="ping"}`,
		`bandit_session_aborts_total{class="timeout",protocol="samba"}`,
		`bandit_sessions_by_state{state="proposed"}`,
		`bandit_sessions_total{state="aborted"}`,
		`bandit_role_panics_total{protocol="ping"}`,
		`bandit_errors_total{kind="overflow"}`,
		`bandit_sessions_by_state{state="running"}`,
		`bandit_messages_total{direction="in",kind="role",protocol="ping"}`,
		`bandit_bytes_total{direction="out",kind="control",protocol="session"}`,
	} {
		if v, ok := before[key]; !ok || v != 0 {
			t.Errorf("before any session, %s = %v (exported: %v), want 0", key, v, ok)
		}
	}

	// One completes.
	completedSession[any](t, tn, string(pingSpec(3, "node1", "node2")), 20*time.Second)
	got := scrape(t, tn)
	for key, want := range map[string]float64{
		`bandit_session_duration_seconds_count{outcome="completed",protocol="ping"}`:            1,
		`bandit_session_duration_seconds_bucket{outcome="completed",protocol="ping",le="+Inf"}`: 1,
		`bandit_sessions_total{state="completed"}`:                                              1,
		`bandit_sessions_by_state{state="running"}`:                                             0,
	} {
		if got[key] != want {
			t.Errorf("after a completed session, %s = %v, want %v", key, got[key], want)
		}
	}
	if got[`bandit_session_duration_seconds_sum{outcome="completed",protocol="ping"}`] <= 0 {
		t.Errorf("the completed session's duration is not counted")
	}
	if got[`bandit_messages_total{direction="out",kind="role",protocol="ping"}`] == 0 ||
		got[`bandit_messages_total{direction="out",kind="control",protocol="session"}`] == 0 {
		t.Errorf("no ping role or control messages counted out after a ping session: %v", got)
	}

	// One aborts: node3 declines.
	id, err := tn.StartSession(pingSpec(3, "node1", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	if s := waitEnded(t, tn, id, 20*time.Second); s.State != stateAborted {
		t.Fatalf("session with node3 ended %s (%s), want aborted: node3 declines", s.State, s.Reason)
	}
	got = scrape(t, tn)
	for key, want := range map[string]float64{
		`bandit_session_aborts_total{class="declined",protocol="ping"}`:              1,
		`bandit_session_aborts_total{class="canceled",protocol="ping"}`:              0,
		`bandit_session_duration_seconds_count{outcome="aborted",protocol="ping"}`:   1,
		`bandit_session_duration_seconds_count{outcome="completed",protocol="ping"}`: 1,
		`bandit_sessions_total{state="aborted"}`:                                     1,
	} {
		if got[key] != want {
			t.Errorf("after a declined session, %s = %v, want %v", key, got[key], want)
		}
	}

	// One runs, and is cancelled.
	id, err = tn.StartSession(pingSpec(ping.MaxCount, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "bandit_sessions_by_state{state=\"running\"} to be 1", func() bool {
		return scrape(t, tn)[`bandit_sessions_by_state{state="running"}`] == 1
	})
	if err := tn.CancelSession(id); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, tn, id, 20*time.Second)
	got = scrape(t, tn)
	for key, want := range map[string]float64{
		`bandit_session_aborts_total{class="canceled",protocol="ping"}`:            1,
		`bandit_session_aborts_total{class="declined",protocol="ping"}`:            1,
		`bandit_session_duration_seconds_count{outcome="aborted",protocol="ping"}`: 2,
		`bandit_sessions_by_state{state="running"}`:                                0,
		`bandit_sessions_by_state{state="proposed"}`:                               0,
	} {
		if got[key] != want {
			t.Errorf("after a cancelled session, %s = %v, want %v", key, got[key], want)
		}
	}
}
