package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// run runs the CLI and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestHelpShowsAnExample(t *testing.T) {
	cmds := [][]string{{"init"}, {"run"}, {"id"}, {"peers"}, {"simulate"}, {"version"},
		{"session", "start"}, {"session", "status"}, {"session", "result"}, {"session", "list"}, {"session", "cancel"},
		{"bench", "pattern"}}
	for _, c := range cmds {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			_, stderr, err := run(t, append(c, "-h")...)
			if err != nil {
				t.Fatalf("-h: %v", err)
			}
			if !strings.Contains(stderr, "Usage: bandit-node "+strings.Join(c, " ")) || !strings.Contains(stderr, "Example:\n  bandit-node ") {
				t.Errorf("help of %v lacks a synopsis or an example:\n%s", c, stderr)
			}
		})
	}
	out, _, err := run(t, "session", "-h")
	if err != nil || !strings.Contains(out, "Example:") {
		t.Errorf("session -h: %v\n%s", err, out)
	}
}

// TestExperimentMoved checks that the experiments, which moved to
// bandit-lab, are a one-line usage error saying where they went (the
// command and how to build it), with nothing else written: not an unknown
// command followed by the usage.
func TestExperimentMoved(t *testing.T) {
	for _, args := range [][]string{{"experiment"}, {"experiment", "samba", "--runs", "1"}, {"experiment", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, err := run(t, args...)
			if err == nil || ExitCode(err) != 2 {
				t.Fatalf("err = %v (exit %d), want a usage error", err, ExitCode(err))
			}
			want := "experiment: the command moved to `bandit-lab experiment` (go build ./cmd/bandit-lab), out of the daemon's binary"
			if err.Error() != want || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want %q", err, want)
			}
			if stdout != "" || stderr != "" {
				t.Errorf("wrote more than the error: stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command \"frobnicate\""},
		{[]string{"session", "restart"}, "unknown subcommand \"restart\""},
		{[]string{"init"}, "--dir is required"},
		{[]string{"peers"}, "no config file: pass --config FILE, set BANDIT_NODE_CONFIG=FILE, or run in the directory holding config.toml"},
		{[]string{"simulate"}, "wrong number of arguments"},
		{[]string{"bench"}, "no benchmark given"},
		{[]string{"bench", "frobnicate"}, "unknown benchmark \"frobnicate\""},
		{[]string{"bench", "pattern", "extra"}, "takes no arguments"},
		{[]string{"bench", "pattern", "--k", "0"}, "bench pattern: K must be at least 1, got 0"},
		{[]string{"bench", "pattern", "--transport", "udp"}, "transport must be"},
		{[]string{"bench", "pattern", "--procs", "-1"}, "--procs -1"},
		{[]string{"bench", "pattern", "--party-wrapper", "valgrind"}, "--party-wrapper starts party processes, so it needs --processes"},
		{[]string{"bench", "pattern", "--bit-item-bytes", "-1"}, "frame sizes must be positive"},
	}
	for _, tt := range tests {
		_, _, err := run(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
			t.Errorf("%v: err = %v (exit %d), want a usage error mentioning %q", tt.args, err, ExitCode(err), tt.want)
		}
	}
}

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acme")
	out, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0", "--api", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "12D3Koo") {
		t.Errorf("init printed %q, want the peer ID", out)
	}
	for _, f := range []string{"identity.key", "api.token", "config.toml"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	reg, _ := families.Registry()
	cfg, err := config.LoadConfig(filepath.Join(dir, "config.toml"), reg)
	if err != nil {
		t.Fatalf("the generated config does not load: %v", err)
	}
	if cfg.Node.Name != "acme" || cfg.Policy["ping"].Roles[0] != "participant" {
		t.Errorf("generated config: %+v", cfg)
	}
	if _, _, err := run(t, "init", "--dir", dir); err == nil || !strings.Contains(err.Error(), "refuses to overwrite") {
		t.Errorf("a second init: err = %v, want a refusal", err)
	}
	if _, _, err := run(t, "init", "--dir", t.TempDir(), "--listen", "/ip4/1.2.3.4/tcpx/1"); err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Errorf("bad --listen: err = %v", err)
	}
}

// writeSpec writes a session spec to dir/name and returns its path.
func writeSpec(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSimulateJSON(t *testing.T) {
	spec := writeSpec(t, t.TempDir(), "ping.toml", "protocol = \"ping\"\n[params]\ncount = 4\n[simulation]\nparticipants = 3\nlink_latency = \"1ms\"\n")
	out, _, err := run(t, "simulate", spec, "--json", "--seed", "9")
	if err != nil {
		t.Fatal(err)
	}
	res := testutil.DecodeJSON[struct {
		Session struct {
			Protocol string `json:"protocol"`
			State    string `json:"state"`
		} `json:"session"`
		Result struct {
			Participants []string    `json:"participants"`
			Median       [][]float64 `json:"median_us"`
		} `json:"result"`
		Simulation struct {
			Seed     int64 `json:"seed"`
			Messages int64 `json:"messages"`
		} `json:"simulation"`
	}](t, []byte(out))
	if res.Session.Protocol != "ping" || res.Session.State != "completed" || res.Simulation.Seed != 9 || len(res.Result.Participants) != 3 ||
		res.Result.Median[0][1] != 2000 || res.Simulation.Messages != 3*2*4*2 {
		t.Errorf("simulate --json = %+v", res)
	}
	text, _, err := run(t, "simulate", spec)
	if err != nil || !strings.Contains(text, "Round-trip time, median of 4") {
		t.Errorf("simulate: %v\n%s", err, text)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("protocol = \"ping\"\n[params]\ncount = 4\nbudget = 2\n[simulation]\nparticipants = 3\n"), 0o644)
	if _, _, err := run(t, "simulate", bad); err == nil || !strings.Contains(err.Error(), "params.budget") {
		t.Errorf("bad spec: err = %v, want one naming params.budget", err)
	}
}

// TestCLIAgainstDaemons drives two real daemons (in this process, over libp2p
// on loopback) through the CLI only: init, run, peers, id, session start
// --wait --json, list, result, and a bad spec.
func TestCLIAgainstDaemons(t *testing.T) {
	root := t.TempDir()
	nodes := initPair(t, root)
	for _, n := range nodes {
		startDaemon(t, n.cfg)
	}
	testutil.WaitFor(t, 20*time.Second, "node1 to connect to node2", connectedToOne(t, nodes[0].cfg))
	out, _, err := run(t, "id", "--config", nodes[1].cfg, "--json")
	if err != nil || !strings.Contains(out, nodes[1].id) {
		t.Errorf("id: %v %s", err, out)
	}

	spec := writeSpec(t, root, "ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 50\n")
	res, stderr := pingSession(t, nodes[0].cfg, spec, "session start")
	if !strings.Contains(stderr, "100.0%") || !strings.Contains(stderr, "ETA") {
		t.Errorf("no progress bar on stderr: %q", stderr)
	}
	list, _, err := run(t, "session", "list", "--config", nodes[1].cfg)
	if err != nil || !strings.Contains(list, res.Session.ID) || !strings.Contains(list, "completed") {
		t.Errorf("session list on node2: %v\n%s", err, list)
	}
	text, _, err := run(t, "session", "result", "--config", nodes[0].cfg, res.Session.ID)
	if err != nil || !strings.Contains(text, "Round-trip time, median of 50") {
		t.Errorf("session result: %v\n%s", err, text)
	}
	checkSessionLogs(t, nodes[0].cfg, nodes[1].cfg, res.Session.ID)

	bad := filepath.Join(root, "bad.toml")
	os.WriteFile(bad, []byte("protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node7\"]\n"), 0o644)
	if _, _, err := run(t, "session", "start", "--config", nodes[0].cfg, bad); err == nil ||
		!strings.Contains(err.Error(), "bad.toml") || !strings.Contains(err.Error(), "node7") {
		t.Errorf("bad spec: err = %v, want one naming the file and node7", err)
	}
	// The daemon parses and checks the spec; its error names the key, the
	// command the file.
	os.WriteFile(bad, []byte("protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = \"3\"\n"), 0o644)
	if _, _, err := run(t, "session", "start", "--config", nodes[0].cfg, bad); err == nil ||
		!strings.Contains(err.Error(), "bad.toml") || !strings.Contains(err.Error(), `params.count: want a whole number, got text "3"`) {
		t.Errorf("bad params: err = %v, want one naming the file and params.count", err)
	} else {
		t.Logf("bad params: %v", err)
	}
	// Under --json, a failure is printed on stdout in the control API's
	// error shape, with the daemon's code and field.
	for _, c := range []struct {
		args             []string
		code, field      string
		status, exitCode int
	}{
		{[]string{"session", "start", "--config", nodes[0].cfg, bad, "--json"}, "spec.wrong_kind", "params.count", 400, 1},
		{[]string{"session", "status", "--config", nodes[0].cfg, "00000000deadbeef", "--json"}, "session.not_found", "", 404, 1},
		{[]string{"session", "result", "--json"}, "cli.usage", "", 0, 2},
	} {
		out, _, err := run(t, c.args...)
		var e apitype.Error
		if jerr := json.Unmarshal([]byte(out), &e); jerr != nil || err == nil || e.Code != c.code || e.Field != c.field ||
			e.Status != c.status || e.Detail != err.Error() || ExitCode(err) != c.exitCode {
			t.Errorf("%v: err %v (exit %d), stdout %q; want code %q field %q status %d exit %d",
				c.args, err, ExitCode(err), out, c.code, c.field, c.status, c.exitCode)
		}
	}
	if _, _, err := run(t, "session", "status", "--config", nodes[0].cfg, "00000000deadbeef"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("status of an unknown session: %v", err)
	}
}

func TestRenderProgress(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := apitype.Session{ID: "x", State: apitype.StateRunning, Started: &start, Progress: apitype.Progress{Step: 25, Total: 100}}
	got := renderProgress(s, start.Add(5*time.Second), 20)
	want := "[#####...............] 25/100  25.0%  5.0/s  ETA 15s  running"
	if got != want {
		t.Errorf("renderProgress = %q, want %q", got, want)
	}
	if got := renderProgress(apitype.Session{ID: "x", State: apitype.StateProposed}, start, 20); got != "x proposed" {
		t.Errorf("before start: %q", got)
	}
}

// TestBenchPattern runs the bare message pattern through the CLI, all hosts in
// this process, and reads its JSON.
func TestBenchPattern(t *testing.T) {
	out, _, err := run(t, "bench", "pattern", "--k", "2", "--steps", "30", "--warmup", "5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	res := testutil.DecodeJSON[struct {
		K             int     `json:"k"`
		Steps         int     `json:"steps"`
		MsPerStep     float64 `json:"ms_per_step"`
		FramesPerStep int     `json:"frames_per_step"`
		Mode          string  `json:"mode"`
	}](t, []byte(out))
	if res.K != 2 || res.Steps != 30 || res.FramesPerStep != 6 || res.MsPerStep <= 0 || res.Mode != "one process" {
		t.Errorf("result %+v", res)
	}
	if _, _, err := run(t, "bench", "pattern", "--k", "0"); err == nil || !strings.Contains(err.Error(), "K must be at least 1") {
		t.Errorf("K = 0: err = %v", err)
	}
}

// TestSimulateSAMBAJSON: `simulate --json` on a SAMBA spec prints the
// fields the issue names, consistent with each other: the pulls add up to
// the budget, one per arm, and SAMBA's cumulative reward is the standard
// algorithm's.
func TestSimulateSAMBAJSON(t *testing.T) {
	spec := writeSpec(t, t.TempDir(), "samba.toml", "protocol = \"samba\"\n[params]\nalgorithm = \"ucb\"\nbudget = 300\npaillier_bits = 512\n[simulation]\narms = [0.6, 0.4, 0.3]\nseed = 4\n")
	out, _, err := run(t, "simulate", spec, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var out2 struct {
		Result     json.RawMessage `json:"result"`
		Simulation struct {
			Messages       int64   `json:"messages"`
			ElapsedSeconds float64 `json:"elapsed_seconds"`
		} `json:"simulation"`
	}
	if err := json.Unmarshal([]byte(out), &out2); err != nil {
		t.Fatal(err)
	}
	res := testutil.DecodeJSON[struct {
		Algorithm       string    `json:"algorithm"`
		Budget          int64     `json:"budget"`
		Arms            []float64 `json:"arms"`
		Reward          *int64    `json:"cumulative_reward"`
		Reference       *int64    `json:"reference_cumulative_reward"`
		Pulls           []int64   `json:"pulls"`
		Messages        int64     `json:"messages"`
		ElapsedSeconds  float64   `json:"elapsed_seconds"`
		SameArmSequence *bool     `json:"same_arm_sequence"`
	}](t, out2.Result)
	res.Messages, res.ElapsedSeconds = out2.Simulation.Messages, out2.Simulation.ElapsedSeconds
	var pulls int64
	for _, n := range res.Pulls {
		pulls += n
	}
	switch {
	case res.Algorithm != "ucb" || res.Budget != 300 || !slices.Equal(res.Arms, []float64{0.6, 0.4, 0.3}):
		t.Errorf("algorithm, budget, arms = %q, %d, %v", res.Algorithm, res.Budget, res.Arms)
	case res.Reward == nil || res.Reference == nil || *res.Reward != *res.Reference || res.SameArmSequence == nil || !*res.SameArmSequence:
		t.Errorf("cumulative_reward %v, reference_cumulative_reward %v, same_arm_sequence %v", res.Reward, res.Reference, res.SameArmSequence)
	case len(res.Pulls) != 3 || pulls != 300:
		t.Errorf("pulls %v for a budget of 300 over 3 arms", res.Pulls)
	case res.Messages != (300-3)*(2*3+2)+3+1+3+3+3+1:
		t.Errorf("messages = %d, want 2K+2 a step and the setup's", res.Messages)
	case res.ElapsedSeconds <= 0:
		t.Errorf("elapsed_seconds = %v", res.ElapsedSeconds)
	}
}

// testDaemon is a node directory made by `init` for a CLI test.
type testDaemon struct {
	dir, cfg, id string
	port         int
}

// initPair runs `init` for node1 and node2 under root, on distinct
// loopback ports (four draws from 12,000 ports repeat one about once in
// 2,000 runs; a daemon could not listen then), and puts each in the
// other's address book. Their daemons are not started.
func initPair(t *testing.T, root string) []testDaemon {
	t.Helper()
	nodes := make([]testDaemon, 2)
	used := map[int]bool{}
	distinctPort := func() int {
		p := testutil.FreePort(t)
		for used[p] {
			p = testutil.FreePort(t)
		}
		used[p] = true
		return p
	}
	for i := range nodes {
		dir := filepath.Join(root, fmt.Sprintf("node%d", i+1))
		port, api := distinctPort(), distinctPort()
		out, _, err := run(t, "init", "--dir", dir, "--name", fmt.Sprintf("node%d", i+1), "--policy-open",
			"--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port), "--api", fmt.Sprintf("127.0.0.1:%d", api))
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = testDaemon{dir: dir, cfg: filepath.Join(dir, "config.toml"), id: strings.TrimSpace(out), port: port}
	}
	for i := range nodes {
		j := 1 - i
		appendConfig(t, nodes[i].cfg, fmt.Sprintf("\n[[peers]]\nname = \"node%d\"\npeer_id = %q\naddrs = [\"/ip4/127.0.0.1/tcp/%d\"]\n", j+1, nodes[j].id, nodes[j].port))
	}
	return nodes
}

// appendConfig appends text to the config file cfg.
func appendConfig(t *testing.T, cfg, text string) {
	t.Helper()
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
