package node

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestMetricsDocumentedAndAlertable: every bandit_ metric a daemon exports
// is documented in docs/operations.md, every metric the alerting rules of
// deploy/prometheus/alerts.yml name is one a daemon exports, and the rules
// alert on readiness and on records the disk refuses.
func TestMetricsDocumentedAndAlertable(t *testing.T) {
	// node1 of two: its address book has a peer (not connected).
	tn := startNode(t, testConfigs(t, 2)[0])
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
	// What an operator must hear of even if nobody watches the dashboards:
	// a node not ready, and records its disk refuses (held in memory, lost
	// if the daemon stops).
	for _, must := range []string{"bandit_ready", "bandit_records_unsaved", "bandit_store_healthy"} {
		if !slices.Contains(named, must) {
			t.Errorf("no rule of alerts.yml alerts on %s", must)
		}
	}
}
