package bench_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestABScript runs bench/ab.sh on two small commands and on bad input:
// one row a pair and a median line with the ratios; a refused -n and a
// failing command exit non-zero naming what is wrong.
func TestABScript(t *testing.T) {
	out, err := exec.Command("bash", "ab.sh", "-n", "3", "--warmup", "0", "--",
		"seq 1 20000 | sort -n >/dev/null", "seq 1 40000 | sort -n >/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("ab.sh: %v\n%s", err, out)
	}
	rows := regexp.MustCompile(`(?m)^[123] +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9]+ +[0-9]+$`).FindAllString(string(out), -1)
	if len(rows) != 3 {
		t.Errorf("want 3 pair rows, got %d:\n%s", len(rows), out)
	}
	if !regexp.MustCompile(`(?m)^median: CPU [0-9.]+ against [0-9.]+ s, B/A [0-9.]+x \(pairs [0-9.]+–[0-9.]+x\); wall `).Match(out) {
		t.Errorf("no median line:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0", "--", "true", "true"}, "-n takes a positive number of pairs, not '0'"},
		{[]string{"--", "true"}, "usage:"},
		{[]string{"-n", "1", "--warmup", "0", "--", "true", "exit 3"}, "command B failed: exit 3"},
	} {
		out, err := exec.Command("bash", append([]string{"ab.sh"}, c.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("ab.sh %q: %v, %s; want a failure saying %q", c.args, err, out, c.want)
		}
	}
}
