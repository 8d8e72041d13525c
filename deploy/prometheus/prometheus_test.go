// Package prometheus holds the example Prometheus configuration of a fleet
// of bandit-node daemons (prometheus.yml) and its alerting rules
// (alerts.yml). Its test checks both files as promtool would check their
// structure — promtool is not a dependency of this module.
package prometheus

import (
	"bytes"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// promDuration is Prometheus's duration format: "30s", "1h30m", "7d".
var promDuration = regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|y))+$`)

// decodeStrict decodes file into v, refusing keys v has no field for.
func decodeStrict(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// scrapeConfig is the part of Prometheus's configuration file that
// prometheus.yml uses.
type scrapeConfig struct {
	Global struct {
		ScrapeInterval     string `yaml:"scrape_interval"`
		ScrapeTimeout      string `yaml:"scrape_timeout"`
		EvaluationInterval string `yaml:"evaluation_interval"`
	} `yaml:"global"`
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		Scheme        string `yaml:"scheme"`
		StaticConfigs []struct {
			Targets []string          `yaml:"targets"`
			Labels  map[string]string `yaml:"labels"`
		} `yaml:"static_configs"`
		FileSDConfigs []struct {
			Files           []string `yaml:"files"`
			RefreshInterval string   `yaml:"refresh_interval"`
		} `yaml:"file_sd_configs"`
	} `yaml:"scrape_configs"`
}

func TestScrapeConfig(t *testing.T) {
	var c scrapeConfig
	decodeStrict(t, "prometheus.yml", &c)
	for key, d := range map[string]string{"global.scrape_interval": c.Global.ScrapeInterval,
		"global.scrape_timeout": c.Global.ScrapeTimeout, "global.evaluation_interval": c.Global.EvaluationInterval} {
		if !promDuration.MatchString(d) {
			t.Errorf("%s: %q is not a duration", key, d)
		}
	}
	for _, f := range c.RuleFiles {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("rule_files: %v", err)
		}
	}
	if len(c.ScrapeConfigs) == 0 {
		t.Fatal("no scrape_configs")
	}
	jobs := map[string]bool{}
	for _, sc := range c.ScrapeConfigs {
		if sc.JobName == "" || jobs[sc.JobName] {
			t.Errorf("job_name %q: empty or used twice", sc.JobName)
		}
		jobs[sc.JobName] = true
		if sc.MetricsPath != "/metrics" || (sc.Scheme != "" && sc.Scheme != "http" && sc.Scheme != "https") {
			t.Errorf("job %s: metrics_path %q, scheme %q", sc.JobName, sc.MetricsPath, sc.Scheme)
		}
		targets := 0
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				targets++
				if _, port, err := net.SplitHostPort(tg); err != nil || port == "" {
					t.Errorf("job %s: target %q is not host:port", sc.JobName, tg)
				}
			}
			if st.Labels["org"] == "" {
				t.Errorf("job %s: targets %v have no org label", sc.JobName, st.Targets)
			}
		}
		for _, fs := range sc.FileSDConfigs {
			if len(fs.Files) == 0 || (fs.RefreshInterval != "" && !promDuration.MatchString(fs.RefreshInterval)) {
				t.Errorf("job %s: file_sd_configs %+v", sc.JobName, fs)
			}
		}
		if targets == 0 && len(sc.FileSDConfigs) == 0 {
			t.Errorf("job %s scrapes nothing", sc.JobName)
		}
	}
	if !jobs["bandit-node"] {
		t.Error(`no job "bandit-node", which the rules of alerts.yml select`)
	}
}

// ruleFile is Prometheus's rule file format, alerting rules only.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

var alertName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

func TestAlertRules(t *testing.T) {
	var f ruleFile
	decodeStrict(t, "alerts.yml", &f)
	if len(f.Groups) == 0 {
		t.Fatal("no rule groups")
	}
	groups, alerts := map[string]bool{}, map[string]bool{}
	for _, g := range f.Groups {
		if g.Name == "" || groups[g.Name] {
			t.Errorf("group name %q: empty or used twice", g.Name)
		}
		groups[g.Name] = true
		if g.Interval != "" && !promDuration.MatchString(g.Interval) {
			t.Errorf("group %s: interval %q is not a duration", g.Name, g.Interval)
		}
		if len(g.Rules) == 0 {
			t.Errorf("group %s has no rules", g.Name)
		}
		for _, r := range g.Rules {
			if !alertName.MatchString(r.Alert) || alerts[r.Alert] {
				t.Errorf("group %s: alert %q is not a name such as DaemonDown, or is used twice", g.Name, r.Alert)
			}
			alerts[r.Alert] = true
			if strings.TrimSpace(r.Expr) == "" || !balanced(r.Expr) {
				t.Errorf("alert %s: expr %q is empty or its brackets are unbalanced", r.Alert, r.Expr)
			}
			if !strings.Contains(r.Expr, `job="bandit-node"`) {
				t.Errorf("alert %s: expr %q does not select job=\"bandit-node\"", r.Alert, r.Expr)
			}
			if r.For != "" && !promDuration.MatchString(r.For) {
				t.Errorf("alert %s: for %q is not a duration", r.Alert, r.For)
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("alert %s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: no summary or description annotation", r.Alert)
			}
		}
	}
}

// balanced reports whether the brackets and quotes of a PromQL expression
// pair up.
func balanced(expr string) bool {
	var stack []rune
	pair := map[rune]rune{')': '(', ']': '[', '}': '{'}
	inQuote := false
	for _, c := range expr {
		switch {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
		case pair[c] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != pair[c] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0 && !inQuote
}
