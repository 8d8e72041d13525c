package cli

import (
	"regexp"
	"strings"
	"testing"
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
