package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	dto "github.com/prometheus/client_model/go"
)

// TestMetricsDocumentedAndAlertable: every bandit_ metric a daemon exports
// is documented in docs/operations.md, every metric the alerting rules of
// deploy/prometheus/alerts.yml and the panels of the Grafana dashboard
// deploy/grafana/bandit-node.json name is one a daemon exports, the rules
// alert on readiness and on records the disk refuses, and the dashboard
// shows what an operator looks for.
func TestMetricsDocumentedAndAlertable(t *testing.T) {
	t.Parallel()
	// node1 of two: its address book has a peer (not connected), and a
	// standing session whose first run has ended (declined: the peer is
	// down), so that every family of series exists.
	cfg := testConfigs(t, 2)[0]
	cfg.Sessions = []config.StandingConfig{standingPing("weekly", 2, 168*time.Hour)}
	tn := startNode(t, cfg)
	testutil.WaitFor(t, 30*time.Second, "the standing session's first run to end", func() bool {
		runs := tn.standing.List()
		return len(runs) == 1 && runs[0].Last != nil
	})
	families, err := tn.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	var ours []string
	for _, f := range families {
		name := f.GetName()
		exported[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				exported[name+s] = true
			}
		}
		if strings.HasPrefix(name, "bandit_") {
			ours = append(ours, name)
		}
	}
	docs, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range ours {
		if !strings.Contains(string(docs), "`"+name) {
			t.Errorf("%s is exported but docs/operations.md does not document it", name)
		}
	}
	rules, err := os.ReadFile(filepath.Join("..", "deploy", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`\bbandit_[a-z_]+`).FindAllString(string(rules), -1)
	if len(named) == 0 {
		t.Fatal("alerts.yml names no bandit_ metric")
	}
	for _, name := range named {
		if !exported[name] {
			t.Errorf("alerts.yml uses %s, which a daemon does not export", name)
		}
	}
	dashboardPanels(t, exported)
	// What an operator must hear of even if nobody watches the dashboards:
	// a node not ready, and records its disk refuses (held in memory, lost
	// if the daemon stops).
	for _, must := range []string{"bandit_ready", "bandit_records_unsaved", "bandit_store_healthy"} {
		if !slices.Contains(named, must) {
			t.Errorf("no rule of alerts.yml alerts on %s", must)
		}
	}
}

// dashboardPanels checks the Grafana dashboard: valid JSON, every query
// names only metrics a daemon exports, and it has a panel on each thing
// an operator of a fleet looks for.
func dashboardPanels(t *testing.T, exported map[string]bool) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "bandit-node.json"))
	if err != nil {
		t.Fatal(err)
	}
	var board struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &board); err != nil {
		t.Fatalf("deploy/grafana/bandit-node.json: %v", err)
	}
	used := map[string]bool{}
	for _, p := range board.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if !balanced(q.Expr) {
				t.Errorf("dashboard panel %q: unbalanced brackets in %s", p.Title, q.Expr)
			}
			for _, name := range regexp.MustCompile(`\bbandit_[a-z_]+`).FindAllString(q.Expr, -1) {
				used[name] = true
				if !exported[name] {
					t.Errorf("dashboard panel %q queries %s, which a daemon does not export", p.Title, name)
				}
			}
		}
	}
	// The list: readiness, peers by name, sessions by state and
	// outcome, durations, abort classes, bytes by protocol, standing
	// sessions' freshness, storage health.
	for _, must := range []string{"bandit_ready", "bandit_peer_connected", "bandit_sessions_by_state", "bandit_sessions_total",
		"bandit_session_duration_seconds_bucket", "bandit_session_aborts_total", "bandit_bytes_total",
		"bandit_standing_next_due_timestamp_seconds", "bandit_standing_last_run_end_timestamp_seconds", "bandit_store_healthy"} {
		if !used[must] {
			t.Errorf("the dashboard has no panel on %s", must)
		}
	}
}

// balanced reports whether the brackets of a PromQL expression pair up.
func balanced(expr string) bool {
	var stack []rune
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	for _, c := range expr {
		switch c {
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[c] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0
}
