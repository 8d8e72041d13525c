package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unitFile is a systemd unit: each section's keys with their values in
// order (a key may repeat).
type unitFile map[string]map[string][]string

// readUnit parses a unit file's sections and KEY=VALUE lines, skipping
// comments and blank lines; anything else fails the test.
func readUnit(t *testing.T, path string) unitFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u, section := unitFile{}, ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a KEY=VALUE line in a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// value is the last value of key in section ("" if unset), as systemd reads it.
func (u unitFile) value(section, key string) string {
	vs := u[section][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// TestSystemdUnit checks deploy/systemd/bandit-node.service for what the
// daemon relies on (Type=notify, the reload signal, where its state lives)
// and the hardening it promises; with systemd-analyze on the machine, the
// unit must also verify without a warning.
func TestSystemdUnit(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "systemd", "bandit-node.service")
	u := readUnit(t, path)
	want := []struct{ section, key, value string }{
		{"Service", "Type", "notify"},
		{"Service", "NotifyAccess", "main"},
		{"Service", "ExecReload", "/bin/kill -HUP $MAINPID"},
		{"Service", "Restart", "on-failure"},
		{"Service", "User", "bandit-node"},
		{"Service", "Group", "bandit-node"},
		{"Service", "StateDirectory", "bandit-node"},
		{"Service", "ProtectSystem", "strict"},
		{"Service", "ProtectHome", "yes"},
		{"Service", "PrivateTmp", "yes"},
		{"Service", "NoNewPrivileges", "yes"},
		{"Service", "RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK"},
		{"Install", "WantedBy", "multi-user.target"},
	}
	for _, w := range want {
		if got := u.value(w.section, w.key); got != w.value {
			t.Errorf("[%s] %s = %q, want %q", w.section, w.key, got, w.value)
		}
	}
	if u.value("Service", "LimitNOFILE") == "" {
		t.Error("[Service] LimitNOFILE is not set")
	}
	// The config, hence the node directory, is in the state directory:
	// the only place ProtectSystem=strict lets the daemon write.
	exec0 := strings.Fields(u.value("Service", "ExecStart"))
	stateDir := "/var/lib/" + u.value("Service", "StateDirectory") + "/"
	if i := slices.Index(exec0, "--config"); len(exec0) < 2 || exec0[1] != "run" || i < 0 || i+1 >= len(exec0) ||
		!strings.HasPrefix(exec0[i+1], stateDir) {
		t.Errorf("ExecStart = %q: want `bandit-node run --config %s...`", u.value("Service", "ExecStart"), stateDir)
	}
	if wd := u.value("Service", "WorkingDirectory"); wd != strings.TrimSuffix(stateDir, "/") {
		t.Errorf("WorkingDirectory = %q, want the state directory %s", wd, stateDir)
	}
	// The sysusers.d entry creates the unit's user.
	sysusers, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", "bandit-node.sysusers"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sysusers), "\nu "+u.value("Service", "User")+" ") {
		t.Errorf("bandit-node.sysusers does not create the user %s:\n%s", u.value("Service", "User"), sysusers)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified by systemd")
		return
	}
	// systemd-analyze verify checks that ExecStart is executable: point it
	// at this test's binary instead of /usr/local/bin/bandit-node.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "bandit-node.service")
	if err := os.WriteFile(unit, bytes.ReplaceAll(text, []byte("ExecStart="+exec0[0]), []byte("ExecStart="+self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
