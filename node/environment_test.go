package node

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// ownerProgram is the data owner program of these tests
// (testdata/env/owner.sh: its comment says what it does).
func ownerProgram(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "env", "owner.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// execOwner is the environment of a data owner answered by owner.sh,
// whose mode file and logs are in dir.
func execOwner(t testing.TB, dir string, requestTimeout time.Duration) environment.Config {
	c := environment.Config{Source: environment.SourceExec, Exec: environment.DefaultExecConfig()}
	c.Exec.Command = []string{ownerProgram(t), dir}
	c.Exec.Dir = dir
	c.Exec.RequestTimeout = requestTimeout
	c.Exec.StopGrace = 500 * time.Millisecond
	return c
}

// setEnvironment gives cfg's SAMBA data owner the environment env (no
// simulated arm: its local data is nil, as DecodeLocal leaves it).
func setEnvironment(cfg *config.Config, env environment.Config) {
	cfg.LocalData["samba"] = map[string]any{"data_owner": nil}
	cfg.Environments = map[string]map[string]environment.Config{"samba": {"data_owner": env}}
}

// sambaOwnersSpec is a SAMBA spec with node1 the data customer, node2 the
// controller, node3 comp and owners the data owners.
func sambaOwnersSpec(budget int, owners ...string) []byte {
	return []byte("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"" +
		strings.Join(owners, "\", \"") + "\"]\n[params]\nbudget = " + strconv.Itoa(budget) + "\npaillier_bits = 512\n")
}

// writeMode sets what owner.sh does in dir (its comment lists the modes).
func writeMode(t testing.TB, dir, mode string, after int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "mode"), []byte(mode+" "+strconv.Itoa(after)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loggedRewards reads what owner.sh in dir handed out in session id: the
// number of answers and their sum.
func loggedRewards(t testing.TB, dir, id string) (n int, sum float64) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "log-"+id))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, r, ok := strings.Cut(sc.Text(), " ")
		v, err := strconv.ParseFloat(r, 64)
		if !ok || err != nil {
			t.Fatalf("%s: line %q", f.Name(), sc.Text())
		}
		n++
		sum += v
	}
	return n, sum
}

// TestEnvironmentAdmission: on real daemons, a data owner whose replay
// file is too short, empty or missing, or whose exec program does not
// exist, declines the proposal, and the session aborts at the initiator
// and at every participant that had accepted, before it starts, with a
// reason naming the organization, the key and the file or program. The
// file and the program exist when the daemons start (a daemon does not
// start without them: TestEnvironmentMissingAtStart) and go afterwards.
func TestEnvironmentAdmission(t *testing.T) {
	dir := t.TempDir()
	replay := filepath.Join(dir, "rewards.csv")
	missing := filepath.Join(dir, "no-such-owner")
	for _, f := range []string{replay, missing} {
		if err := os.WriteFile(f, []byte("1\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	nodes := startNetwork(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		switch i {
		case 3: // node4
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: 0.5}}
		case 4: // node5
			setEnvironment(cfg, environment.Config{Source: environment.SourceReplay,
				Replay: environment.ReplayConfig{File: replay, Order: environment.OrderSequential}})
		case 5: // node6
			c := environment.Config{Source: environment.SourceExec, Exec: environment.DefaultExecConfig()}
			c.Exec.Command = []string{missing}
			setEnvironment(cfg, c)
		}
	})
	const budget = 200
	for _, c := range []struct {
		name     string
		file     string // node5's replay file; "" removes it
		owner    string // the data owner that declines
		contains []string
	}{
		{"too short", "reward\n1\n0\n1\n", "node5", []string{"local.samba.data_owner", replay, "has 3 rows", "needs 200"}},
		{"empty", "", "node5", []string{"local.samba.data_owner", replay, "empty"}},
		{"missing", "-", "node5", []string{"local.samba.data_owner", replay, "no such file"}},
		{"no program", "", "node6", []string{"local.samba.data_owner", missing, "command"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.owner == "node6" {
				os.Remove(missing)
			}
			os.Remove(replay)
			if c.file != "-" {
				if err := os.WriteFile(replay, []byte(c.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			id, err := nodes[0].StartSession(sambaOwnersSpec(budget, "node4", c.owner))
			if err != nil {
				t.Fatal(err)
			}
			for _, tn := range nodes[:4] {
				got := waitEnded(t, tn, id, 30*time.Second)
				if got.State != stateAborted {
					t.Errorf("%s: session %s, want aborted", tn.cfg.Node.Name, got.State)
					continue
				}
				if tn == nodes[0] {
					t.Logf("aborted: %s", got.Reason)
				}
				// The decline names the organization and the class; the
				// local detail (the file, its rows, the program) stays
				// in the decliner's log.
				if want := c.owner + " declined: " + c.owner + " cannot take part: the environment of one of its roles is not ready"; !strings.Contains(got.Reason, want) {
					t.Errorf("%s: the reason %q does not say %q", tn.cfg.Node.Name, got.Reason, want)
				}
				for _, local := range c.contains[1:] {
					if strings.Contains(got.Reason, local) {
						t.Errorf("%s: the reason %q carries %s's local detail %q", tn.cfg.Node.Name, got.Reason, c.owner, local)
					}
				}
				if got.Progress.Step != 0 {
					t.Errorf("%s: the session made %d steps before it aborted", tn.cfg.Node.Name, got.Progress.Step)
				}
			}
			// The data owner that declined never registered the session.
			decliner := nodes[map[string]int{"node5": 4, "node6": 5}[c.owner]]
			if _, err := decliner.sessionRecord(id); err == nil {
				t.Errorf("%s keeps a record of the session it declined", c.owner)
			}
			// Its operator reads the whole cause in its log.
			logged := false
			for _, rec := range decliner.logs.find("declined a session", "session", id) {
				logged = logged || strings.Contains(rec.Attrs["reason"], c.contains[1])
			}
			if !logged {
				t.Errorf("%s's log does not say why it declined (%q)", c.owner, c.contains[1])
			}
		})
	}
}

// TestEnvironmentProgramsOnTheNetwork runs SAMBA sessions on six daemons
// whose data owners' environments are programs (testdata/env/owner.sh):
// first all three answering well, and the session completes with the
// cumulative reward the programs handed out (what a simulated run of the
// same pulls would give); then, for each fault of a program — garbage, an
// answer too late, exiting at every start, a reward out of range — a
// session with node5's program at fault aborts on every daemon with a
// reason naming the organization, the role, the step and the class of
// failure, node5's record alone holding the detail (its program's last
// stderr line, its answer) — the secret the program printed is in no
// other daemon's files, log or API answers — while a session started at the same time
// on the same data customer, controller and comp completes; after each, a
// ping session over all six daemons completes. Every wait is bounded.
func TestEnvironmentProgramsOnTheNetwork(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dirs := make([]string, 6)
	nodes := startNetwork(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i < 3 {
			return
		}
		dirs[i] = filepath.Join(root, cfg.Node.Name)
		if err := os.MkdirAll(dirs[i], 0o700); err != nil {
			t.Fatal(err)
		}
		timeout := 5 * time.Second
		if i == 4 { // node5, the one at fault
			timeout = 300 * time.Millisecond
		}
		setEnvironment(cfg, execOwner(t, dirs[i], timeout))
	})
	for _, d := range dirs[3:] {
		writeMode(t, d, "ok", 0)
	}

	t.Run("all programs", func(t *testing.T) {
		const budget = 300
		got, res := completedSession[samba.Result](t, nodes[0], string(sambaOwnersSpec(budget, "node4", "node5", "node6")), 60*time.Second)
		var pulls int
		var sum float64
		for _, d := range dirs[3:] {
			n, s := loggedRewards(t, d, got.ID)
			pulls += n
			sum += s
		}
		if pulls != budget {
			t.Errorf("the programs answered %d pulls, want the budget, %d", pulls, budget)
		}
		if float64(res.CumulativeReward) != sum {
			t.Errorf("the data customer's cumulative reward is %d; the programs handed out %v", res.CumulativeReward, sum)
		}
	})

	ping := pingSpec(5, "node1", "node2", "node3", "node4", "node5", "node6")
	for _, c := range []struct {
		mode   string
		class  string   // what every organization learns
		detail []string // what node5 alone records
	}{
		{"garbage", "its environment failed", []string{"pull at step", `answered "this is not JSON`, "owner.sh: printing garbage at step"}},
		{"slow", "its environment failed", []string{"pull at step", "did not send its answer within 300ms", "owner.sh: too slow at step"}},
		{"exits", "its environment failed", []string{"pull at step", "again after a restart", "owner.sh: exiting at step"}},
		{"half", "its role refused what its environment answered", []string{"a reward that is not 0 or 1"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			writeMode(t, dirs[4], c.mode, 20)
			faulty, err := nodes[0].StartSession(sambaOwnersSpec(400, "node4", "node5"))
			if err != nil {
				t.Fatal(err)
			}
			other, err := nodes[0].StartSession(sambaOwnersSpec(400, "node4", "node6"))
			if err != nil {
				t.Fatal(err)
			}
			for _, tn := range nodes[:5] {
				got := waitEnded(t, tn, faulty, 60*time.Second)
				if got.State != stateAborted {
					t.Errorf("%s: the session with a faulty program %s, want aborted", tn.cfg.Node.Name, got.State)
					continue
				}
				if tn == nodes[0] {
					t.Logf("aborted: %s", got.Reason)
				}
				if want := "data_owner[1] (node5): " + c.class; !strings.Contains(got.Reason, want) {
					t.Errorf("%s: the reason %q does not say %q", tn.cfg.Node.Name, got.Reason, want)
				}
				if tn != nodes[4] {
					if got.Detail != "" {
						t.Errorf("%s: the record of another organization's failure has a detail: %q", tn.cfg.Node.Name, got.Detail)
					}
					continue
				}
				for _, want := range c.detail {
					if !strings.Contains(got.Detail, want) {
						t.Errorf("node5: the detail %q does not say %q", got.Detail, want)
					}
				}
			}
			if c.mode == "exits" {
				// node5's Node page: its program's restart and its last
				// stderr line, from the session that used it last.
				info := apiBackend{nodes[4].Node}.NodeInfo()
				if len(info.Environments) != 1 || info.Environments[0].Key != "local.samba.data_owner" || info.Environments[0].Session != faulty ||
					info.Environments[0].Restarts < 1 || !strings.Contains(info.Environments[0].LastError, "exiting at step") {
					t.Errorf("node5's environment health %+v, want local.samba.data_owner of %s, restarted, its last stderr line", info.Environments, faulty)
				}
			}
			// The program's secret is in node5's own record and log, and in
			// nothing any other daemon stores, logs or serves.
			if where := leaks(t, nodes[4], faulty, "hunter2"); len(where) == 0 {
				t.Errorf("node5 keeps no trace of its program's failure (the secret is nowhere in its record or log)")
			}
			for _, tn := range []*testNode{nodes[0], nodes[1], nodes[2], nodes[3], nodes[5]} {
				if where := leaks(t, tn, faulty, "hunter2"); len(where) > 0 {
					t.Errorf("%s holds node5's secret in %v", tn.cfg.Node.Name, where)
				}
			}
			for _, tn := range []*testNode{nodes[0], nodes[1], nodes[2], nodes[3], nodes[5]} {
				if got := waitEnded(t, tn, other, 60*time.Second); got.State != stateCompleted {
					t.Errorf("%s: the session started beside it %s (%s), want completed", tn.cfg.Node.Name, got.State, got.Reason)
				}
			}
			// Every daemon goes on: a ping over all six completes.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := nodes[4].api.StartSession(ctx, ping)
			if err != nil {
				t.Fatal(err)
			}
			final, err := nodes[4].api.Wait(ctx, s.ID, 50*time.Millisecond, nil)
			if err != nil {
				t.Fatal(err)
			}
			if final.State != stateCompleted {
				t.Errorf("a ping after the fault %s: %s", final.State, final.Reason)
			}
		})
	}
}

// leaks lists where tn holds secret: a file under its data directory (its
// records, session logs), a line it logged, or an answer of its control
// API about session id.
func leaks(t testing.TB, tn *testNode, id, secret string) []string {
	t.Helper()
	var where []string
	err := filepath.WalkDir(tn.cfg.Node.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			where = append(where, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: reading its data directory: %v", tn.cfg.Node.Name, err)
	}
	for _, rec := range tn.logs.all() {
		if line := fmt.Sprint(rec); strings.Contains(line, secret) {
			where = append(where, "its log: "+line)
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var answers []any
	if s, err := tn.api.Session(ctx, id); err == nil {
		answers = append(answers, s)
	}
	if l, err := tn.api.SessionLogs(ctx, id, 0); err == nil {
		answers = append(answers, l)
	}
	if ss, err := tn.api.Sessions(ctx); err == nil {
		answers = append(answers, ss)
	}
	for _, a := range answers {
		if b, err := json.Marshal(a); err == nil && bytes.Contains(b, []byte(secret)) {
			where = append(where, fmt.Sprintf("its control API's %T", a))
		}
	}
	return where
}
