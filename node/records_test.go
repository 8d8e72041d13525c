package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/node/store"
)

func TestRetentionConfig(t *testing.T) {
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n[session]\n"
	for _, c := range []struct {
		text      string
		keep      time.Duration
		keepCount int
		err       string
	}{
		{"", 0, 0, ""},
		{"keep = \"90d\"\n", 90 * 24 * time.Hour, 0, ""},
		{"keep = \"720h\"\nkeep_count = 1000\n", 720 * time.Hour, 1000, ""},
		{"keep = \"0\"\n", 0, 0, ""},
		{"keep = \"ninety days\"\n", 0, 0, "not a duration such as \"90d\""},
		{"keep = \"-3d\"\n", 0, 0, "not a number of days"},
		{"keep = \"-1h\"\n", 0, 0, "session.keep"},
		{"keep = \"10m\"\n", 0, 0, "session.keep"},
		{"keep_count = -1\n", 0, 0, "session.keep_count"},
	} {
		cfg, err := config.ParseConfig("config.toml", []byte(base+c.text), testRegistry(t))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want one with %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if cfg.Session.Keep.Duration != c.keep || cfg.Session.KeepCount != c.keepCount {
			t.Errorf("%q: keep %v, keep_count %d; want %v, %d", c.text, cfg.Session.Keep, cfg.Session.KeepCount, c.keep, c.keepCount)
		}
	}
}

// A daemon applies session.keep_count after each session that ends, once
// the records are past the grace (2 s here): of three sessions run one
// after another, each node keeps the last one's record only.
func TestDaemonRemovesRecordsBeyondKeepCount(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		cfg.Session.KeepCount = 1
		cfg.Session.ProposeTimeout = config.Duration{Duration: time.Second}
		cfg.Session.PeerTimeout = config.Duration{Duration: time.Second}
	})
	var last string
	for range 3 {
		id, err := nodes[0].StartSession(pingSpec(2, "node1", "node2"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range nodes {
			if got := waitEnded(t, tn, id, 30*time.Second); got.State != stateCompleted {
				t.Fatalf("%s: %s: %q", tn.cfg.Node.Name, got.State, got.Reason)
			}
		}
		last = id
	}
	for _, tn := range nodes {
		testutil.WaitFor(t, 20*time.Second, tn.cfg.Node.Name+" to keep one record", func() bool {
			recs, _ := tn.store.List()
			return len(recs) == 1 && recs[0].Session.ID == last
		})
	}
}

// A daemon applies the policy when it starts: records older than keep
// that it finds are removed, a run of a standing session summarized, and
// a recent one kept.
func TestDaemonAppliesRetentionAtStart(t *testing.T) {
	cfg := testConfigs(t, 1)[0]
	cfg.Session.Keep = config.RetentionAge{Duration: 48 * time.Hour}
	s, err := store.Open(cfg.Node.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := putEnded(t, s, 1, stateCompleted, "weekly", now.Add(-72*time.Hour), `{"x":1}`)
	recent := putEnded(t, s, 2, stateCompleted, "weekly", now.Add(-24*time.Hour), `{"x":2}`)
	s.Close()
	tn, err := tryStartNode(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tn.stop)
	testutil.WaitFor(t, 20*time.Second, "the old record removed", func() bool { return !tn.store.Exists(old) })
	if !tn.store.Exists(recent) {
		t.Errorf("the record of a session that ended a day ago was removed (keep = 48h)")
	}
	sums, err := tn.store.Summaries()
	if err != nil || sums["weekly"].Runs != 1 || sums["weekly"].LastID != old {
		t.Errorf("summaries %+v (%v), want weekly's run %s", sums, err, old)
	}
}

// refuseSessionsDir makes tn's store fail every write under its sessions
// directory (not the journal's), but the first of each session's record
// (the one that admits the session), until the returned function is
// called: a disk that turns read-only once the session has started.
func refuseSessionsDir(tn *testNode) (restore func()) {
	dir := tn.store.Dir + string(filepath.Separator)
	var mu sync.Mutex
	written := map[string]bool{}
	fail := func(p string) error {
		if !strings.HasPrefix(p, dir) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if !written[p] && strings.HasSuffix(p, ".json") && !strings.HasPrefix(filepath.Base(p), ".") {
			written[p] = true
			return nil
		}
		return errDiskRefuses
	}
	tn.store.FailWrite.Store(&fail)
	return func() { tn.store.FailWrite.Store(nil) }
}

// onDisk reads session id's record as the disk has it, not as the store
// serves it.
func onDisk(t testing.TB, tn *testNode, id string) *store.Record {
	t.Helper()
	rec, err := store.ReadRecord(filepath.Join(store.SessionsDir(tn.cfg.Node.DataDir), id+".json"), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRecordKeptWhileDiskRefuses: when the sessions directory refuses
// writes in the middle of a session, the session completes all the same;
// the control API serves it completed with its result (not the stale
// record on disk), /readyz and the metrics say the store cannot be
// written, the failure is logged once, and once the disk takes writes
// again the record on disk says completed within 30 s.
func TestRecordKeptWhileDiskRefuses(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Metrics = config.MetricsConfig{Listen: "127.0.0.1:0", MinPeers: 1}
		}
	})
	tn := nodes[0]
	tn.rt.SetHooks(sessions.Hooks{ProgressSave: new(time.Duration)}) // every progress report is stored, and refused
	if code, body := readyz(t, tn); code != http.StatusOK {
		t.Fatalf("/readyz before: %d %q", code, body)
	}
	// The initiator's disk, and the participant's, refuse every record of
	// the session after its first.
	restore := refuseSessionsDir(tn)
	restore2 := refuseSessionsDir(nodes[1])
	id, err := tn.StartSession(pingSpec(30, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	got := waitEnded(t, tn, id, 30*time.Second)
	if got.State != stateCompleted {
		t.Fatalf("session ended %s (%s)", got.State, got.Reason)
	}
	if st := waitEnded(t, nodes[1], id, 30*time.Second).State; st != stateCompleted {
		t.Fatalf("node2: session ended %s", st)
	}

	// The API serves the session as it ended, with its result.
	ctx := context.Background()
	res, err := tn.api.Result(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.State != stateCompleted || len(res.Result) == 0 {
		t.Fatalf("the API serves %s with %d bytes of result, want completed with its result", res.Session.State, len(res.Result))
	}
	list, err := tn.api.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != id || list[0].State != stateCompleted {
		t.Errorf("the API lists %+v, want %s completed", list, id)
	}
	if st := onDisk(t, tn, id).Session.State; st == stateCompleted {
		t.Fatalf("the record on disk says %s while the disk refuses writes: the test injected nothing", st)
	}
	// The journal has the session's end.
	if j, err := store.ReadRecord(tn.store.JournalPath(id), id); err != nil || j.Session.State != stateCompleted {
		t.Errorf("journal copy: %+v, %v; want the completed record", j, err)
	}

	// /readyz, the metrics and the log say so.
	code, body := readyz(t, tn)
	if want := "not ready: storage: cannot write session records: " + errDiskRefuses.Error(); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != want {
		t.Errorf("/readyz while the disk refuses: %d %q, want 503 %q", code, body, want)
	}
	m := scrape(t, tn)
	if m[`bandit_store_write_failures_total{what="record"}`] < 2 || m[`bandit_records_unsaved`] != 1 ||
		m[`bandit_store_healthy`] != 0 || m[`bandit_ready`] != 0 || m[`bandit_store_write_failures_total{what="journal"}`] != 0 {
		t.Errorf("metrics while the disk refuses: failures %v (journal %v), unsaved %v, healthy %v, ready %v",
			m[`bandit_store_write_failures_total{what="record"}`], m[`bandit_store_write_failures_total{what="journal"}`],
			m[`bandit_records_unsaved`], m[`bandit_store_healthy`], m[`bandit_ready`])
	}
	if n := len(tn.logs.find("could not store session record; it is kept in memory and written again until the disk takes it", "session", id)); n != 1 {
		t.Errorf("the failure was logged %d times, want once", n)
	}

	// The disks take writes again: the records say completed within 30 s.
	restore()
	restore2()
	start := time.Now()
	for _, n := range nodes {
		testutil.WaitFor(t, 30*time.Second, "the record on disk of "+n.cfg.Node.Name+" to say completed", func() bool {
			return onDisk(t, n, id).Session.State == stateCompleted
		})
	}
	t.Logf("stored %v after the disks took writes again", time.Since(start).Round(time.Millisecond))
	if disk := onDisk(t, tn, id); !bytes.Equal(disk.Result, store.CompactJSON(res.Result)) {
		t.Errorf("the stored result differs from the one served:\n%s\n%s", disk.Result, res.Result)
	}
	testutil.WaitFor(t, 10*time.Second, "/readyz to say ok", func() bool {
		code, _ := readyz(t, tn)
		return code == http.StatusOK
	})
	m = scrape(t, tn)
	if m[`bandit_records_unsaved`] != 0 || m[`bandit_store_healthy`] != 1 {
		t.Errorf("metrics once stored: unsaved %v, healthy %v", m[`bandit_records_unsaved`], m[`bandit_store_healthy`])
	}
	if _, err := os.Stat(tn.store.JournalPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal copy is still there once stored: %v", err)
	}
}

// TestCompletedSessionSurvivesRestartWhileDiskRefused: a daemon whose
// disk refused a completed session's record and that stopped before the
// disk took it again finds the session's end in the journal at its next
// start: the session is recorded completed, on the initiator with its
// result, not aborted.
func TestCompletedSessionSurvivesRestartWhileDiskRefused(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	tn := nodes[0]
	// Never restored: the daemons stop first.
	refuseSessionsDir(tn)
	refuseSessionsDir(nodes[1])
	id, err := tn.StartSession(pingSpec(30, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if got := waitEnded(t, n, id, 30*time.Second); got.State != stateCompleted {
			t.Fatalf("%s: session ended %s (%s)", n.cfg.Node.Name, got.State, got.Reason)
		}
	}
	served := map[string]*store.Record{}
	for _, n := range nodes {
		rec, err := n.sessionRecord(id)
		if err != nil {
			t.Fatal(err)
		}
		served[n.cfg.Node.Name] = rec
	}
	if len(served["node1"].Result) == 0 {
		t.Fatalf("the initiator serves no result")
	}
	for _, n := range nodes {
		n.stop()
		if st := onDisk(t, n, id).Session.State; st == stateCompleted {
			t.Fatalf("%s: the record on disk says %s: the test injected nothing", n.cfg.Node.Name, st)
		}
		if len(n.logs.find("stopping with session records the data directory did not take; the next start stores those in the journal", "in_journal", id)) != 1 {
			t.Errorf("%s: the stopping daemon did not log the session it could not store", n.cfg.Node.Name)
		}
	}

	// While the daemon is down, the commands that read the data directory
	// show the session as the journal has it.
	if res, err := store.StoredResult(tn.cfg, id); err != nil || res.Session.State != stateCompleted || !bytes.Equal(res.Result, served["node1"].Result) {
		t.Errorf("store.StoredResult while down: %s, %v; want completed with its result", res.Session.State, err)
	}
	if list, errs := store.StoredSessions(tn.cfg); len(errs) != 0 || len(list) != 1 || list[0].State != stateCompleted {
		t.Errorf("store.StoredSessions while down: %+v, %v; want the session completed", list, errs)
	}

	for _, n := range nodes {
		restarted := startNode(t, n.cfg)
		disk, want := onDisk(t, restarted, id), served[n.cfg.Node.Name]
		if disk.Session.State != stateCompleted || !bytes.Equal(disk.Result, want.Result) || !reflect.DeepEqual(disk.Local, want.Local) {
			t.Errorf("%s: after the restart the disk has %s (%q) with result %s and local %v, want completed with %s and %v", n.cfg.Node.Name,
				disk.Session.State, disk.Session.Reason, disk.Result, disk.Local, want.Result, want.Local)
		}
		if n := len(restarted.logs.find("session was open when the daemon stopped; recorded as aborted", "session", id)); n != 0 {
			t.Errorf("the restarted daemon recorded the completed session as aborted")
		}
		if _, err := os.Stat(restarted.store.JournalPath(id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the journal copy is still there once stored: %v", err)
		}
	}
}

// TestRecordsSurviveImmutableSessionsDir is the two tests above on a real
// failure of the disk: the sessions directory is made immutable (chattr
// +i, which binds root too) in the middle of a session, the daemon is
// restarted while it still is, and it is made writable again. The daemon
// starts, serves the session completed all along, and the record on disk
// says completed within 30 s of the directory taking writes again. Skipped
// where chattr is not available or the file system has no such flag.
func TestRecordsSurviveImmutableSessionsDir(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Metrics = config.MetricsConfig{Listen: "127.0.0.1:0", MinPeers: 1}
		}
	})
	tn := nodes[0]
	dir := store.SessionsDir(tn.cfg.Node.DataDir)
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("chattr +i %s: %v %s", dir, err, out)
	}
	immutable := true
	mutable := func() {
		if immutable {
			if out, err := exec.Command("chattr", "-i", dir).CombinedOutput(); err != nil {
				t.Fatalf("chattr -i: %v %s", err, out)
			}
			immutable = false
		}
	}
	t.Cleanup(mutable)
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err == nil {
		t.Skip("chattr +i does not stop writes here")
	}
	// Proposed while the directory is immutable, the session is declined
	// with a warning in the log, not an info line.
	declined, err := nodes[1].StartSession(pingSpec(3, "node2", "node1"))
	if err != nil {
		t.Fatal(err)
	}
	// The initiator learns the class of failure, not node1's path or error.
	if got := waitEnded(t, nodes[1], declined, 30*time.Second); got.State != stateAborted ||
		!strings.Contains(got.Reason, "node1 declined: node1 cannot take part: a local storage failure") || strings.Contains(got.Reason, dir) {
		t.Errorf("the initiator's record of the declined session: %s (%q), want aborted: node1 declined for a local storage failure, without its path", got.State, got.Reason)
	}
	testutil.WaitFor(t, 20*time.Second, "node1 to decline", func() bool {
		for _, rec := range tn.logs.all() {
			if rec.Msg == "declined a session" && strings.Contains(rec.Attrs["reason"], store.ErrStorage.Error()) {
				if rec.Level != slog.LevelWarn {
					t.Errorf("a decline for a storage failure is logged at %v, want WARN", rec.Level)
				}
				return true
			}
		}
		return false
	})

	// A session started before the directory turned immutable: long
	// enough (2,000 round trips, a second or more) that chattr, a process
	// of its own, runs before it ends — with 30, a fast machine completed
	// it first, and the test failed for a record written before the
	// directory turned immutable.
	mutable()
	id, err := tn.StartSession(pingSpec(2000, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i: %v %s", err, out)
	}
	immutable = true
	if rec, err := tn.sessionRecord(id); err != nil || rec.Session.State == stateCompleted || rec.Session.State == stateAborted {
		t.Fatalf("the session had ended when the directory turned immutable (%v): the test needs a longer one", err)
	}
	if got := waitEnded(t, tn, id, 60*time.Second); got.State != stateCompleted {
		t.Fatalf("session ended %s (%s)", got.State, got.Reason)
	}
	tn.stop()

	restarted := startNode(t, tn.cfg) // the directory is still immutable
	rec, err := restarted.sessionRecord(id)
	if err != nil || rec.Session.State != stateCompleted || len(rec.Result) == 0 {
		t.Fatalf("after a restart while the disk refuses writes, the API serves %+v, %v; want completed with its result", rec, err)
	}
	if st := onDisk(t, restarted, id).Session.State; st == stateCompleted || st == stateAborted {
		t.Fatalf("the record on disk says %s while the directory is immutable", st)
	}
	if code, body := readyz(t, restarted); code != http.StatusServiceUnavailable || !strings.Contains(body, "storage: cannot write session records: ") {
		t.Errorf("/readyz while the directory is immutable: %d %q", code, body)
	}
	mutable()
	testutil.WaitFor(t, 30*time.Second, "the record on disk to say completed", func() bool {
		return onDisk(t, restarted, id).Session.State == stateCompleted
	})
	if got := onDisk(t, restarted, id); !bytes.Equal(got.Result, rec.Result) {
		t.Errorf("the stored result differs from the one served")
	}
	testutil.WaitFor(t, 10*time.Second, "/readyz to say ok", func() bool {
		code, _ := readyz(t, restarted)
		return code == http.StatusOK
	})
}

// TestSessionLogFailureShowsInReadiness: a session log the disk refuses
// (here the logs directory replaced by a file, a real failure that binds
// root too) blocks nothing — the session completes and its log is kept in
// memory — and shows in /readyz and the metrics until a log file can be
// opened again.
func TestSessionLogFailureShowsInReadiness(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Metrics = config.MetricsConfig{Listen: "127.0.0.1:0", MinPeers: 1}
		}
	})
	tn := nodes[0]
	logs := filepath.Join(tn.cfg.Node.DataDir, "logs")
	if err := os.Rename(logs, logs+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logs, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := completedSession[any](t, tn, string(pingSpec(3, "node1", "node2")), 30*time.Second)
	if v, err := tn.api.SessionLogs(context.Background(), got.ID, 0); err != nil || len(v.Lines) == 0 {
		t.Errorf("the session's log in memory: %+v, %v", v, err)
	}
	code, body := readyz(t, tn)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready: storage: cannot write session logs: ") {
		t.Errorf("/readyz with the logs directory gone: %d %q", code, body)
	}
	if m := scrape(t, tn); m[`bandit_store_write_failures_total{what="session_log"}`] < 1 || m[`bandit_store_healthy`] != 0 {
		t.Errorf("metrics: session_log failures %v, healthy %v", m[`bandit_store_write_failures_total{what="session_log"}`], m[`bandit_store_healthy`])
	}

	if err := os.Remove(logs); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(logs+".away", logs); err != nil {
		t.Fatal(err)
	}
	completedSession[any](t, tn, string(pingSpec(3, "node1", "node2")), 30*time.Second)
	if code, body := readyz(t, tn); code != http.StatusOK {
		t.Errorf("/readyz once the logs directory is back: %d %q", code, body)
	}
}

// TestSessionLogsThroughAPI runs two ping sessions at once on real daemons
// and reads their logs through the control API: each has its own lines and
// only those (the lines the node logged with its ID), also after a restart.
func TestSessionLogsThroughAPI(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	ctx := context.Background()
	a, err := nodes[0].StartSession(pingSpec(100, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := nodes[1].StartSession(pingSpec(80, "node3", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tn *testNode
		id string
	}{{nodes[0], a}, {nodes[1], a}, {nodes[1], b}} {
		if s := waitEnded(t, c.tn, c.id, 30*time.Second); s.State != stateCompleted {
			t.Fatalf("session %s ended %s: %s", c.id, s.State, s.Reason)
		}
	}
	readLogs := func(api *client.Client, id string) []string {
		t.Helper()
		var lines []string
		testutil.WaitFor(t, 10*time.Second, "the log of "+id+" to say it completed", func() bool {
			got, err := api.SessionLogs(ctx, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			lines = got.Lines
			return slices.Contains(logMessages(lines), "session completed")
		})
		return lines
	}
	for _, c := range []struct {
		tn        *testNode
		id, other string
		want      []string
	}{
		{nodes[0], a, b, []string{"proposed a session", "session completed"}},
		{nodes[1], a, b, []string{"accepted a session", "session completed"}},
		{nodes[1], b, a, []string{"proposed a session", "session completed"}},
	} {
		lines := readLogs(c.tn.api, c.id)
		got := logMessages(lines)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s's log of %s lacks %q:\n%s", c.tn.cfg.Node.Name, c.id, w, strings.Join(lines, "\n"))
			}
		}
		// Exactly the records the node logged about this session, and
		// nothing about the other one.
		var want []string
		for _, r := range c.tn.logs.all() {
			if r.Attrs["session"] == c.id {
				want = append(want, r.Msg)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s's log of %s:\n%q\nwant the node's records about it:\n%q", c.tn.cfg.Node.Name, c.id, got, want)
		}
		for _, line := range lines {
			if strings.Contains(line, c.other) {
				t.Errorf("%s's log of %s has a line about %s: %s", c.tn.cfg.Node.Name, c.id, c.other, line)
			}
		}
	}
	// The logs survive a restart of the daemon.
	before := readLogs(nodes[1].api, b)
	nodes[1].stop()
	again := startNode(t, nodes[1].cfg)
	after, err := again.api.SessionLogs(ctx, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after.Lines, before) {
		t.Errorf("after a restart the log of %s is\n%s\nwant\n%s", b, strings.Join(after.Lines, "\n"), strings.Join(before, "\n"))
	}
	var apiErr *client.Error
	if _, err := again.api.SessionLogs(ctx, "00000000deadbeef", 0); !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Errorf("logs of an unknown session: %v, want a 404", err)
	}
}

// TestCorruptRecordsMovedAside: a daemon always starts, whatever its
// sessions/ holds. A record that does not parse or is not valid (a session
// ID that is not the file's, none at all, an unknown state) is moved to
// sessions/corrupt/ with one warning naming the file, so that the next
// start is quiet; a valid record and an open session's are kept, and the
// temporary file of an interrupted write is removed.
func TestCorruptRecordsMovedAside(t *testing.T) {
	cfg := testConfigs(t, 1)[0]
	dir := store.SessionsDir(cfg.Node.DataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const (
		good    = "00000000000000a1"
		running = "00000000000000a2"
	)
	created := `"created":"2026-11-26T10:00:00Z"`
	corrupt := []struct {
		name, text, why string
	}{
		{"empty object", `{}`, `not of 00000000000000b1`},
		{"null", `null`, `not of 00000000000000b2`},
		{"short ID", `{"session":{"id":"zz","state":"completed",` + created + `}}`, `"zz", not of`},
		{"another session's", `{"session":{"id":"00000000000000a1","state":"completed",` + created + `}}`, `holds the record of session "00000000000000a1"`},
		{"unknown state", `{"session":{"id":"00000000000000b5","state":"exploded",` + created + `}}`, `unknown session state "exploded"`},
		{"no creation time", `{"session":{"id":"00000000000000b6","state":"completed"}}`, `no creation time`},
		{"garbage", "\x00\xffnot json", `invalid character`},
		{"truncated", `{"session":{"id":"00000000000000b8"`, `unexpected end of JSON input`},
	}
	files := map[string]string{
		good + ".json":                 `{"session":{"id":"` + good + `","state":"completed",` + created + `}}`,
		running + ".json":              `{"session":{"id":"` + running + `","state":"running",` + created + `}}`,
		"." + good + ".json.tmp123456": `{"session":`, // a write a crash cut short
		"notes.txt":                    "the operator's own file",
	}
	names := make([]string, len(corrupt))
	for i, c := range corrupt {
		names[i] = "00000000000000b" + string(rune('1'+i)) + ".json"
		files[names[i]] = c.text
	}
	// A file of that name moved aside by an earlier start is kept too.
	if err := os.MkdirAll(filepath.Join(dir, store.CorruptDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.CorruptDir, names[0]), []byte("earlier"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	tn := startNode(t, cfg)
	warned := tn.logs.all()
	for i, c := range corrupt {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, names[i])); err == nil {
				t.Errorf("%s is still in sessions/", names[i])
			}
			var found int
			for _, rec := range warned {
				if rec.Msg == "an unreadable session record was moved aside" &&
					strings.Contains(rec.Attrs["record"], filepath.Join(dir, names[i])) {
					found++
					if !strings.Contains(rec.Attrs["record"], c.why) {
						t.Errorf("warning %q does not say %q", rec.Attrs["record"], c.why)
					}
				}
			}
			if found != 1 {
				t.Errorf("%d warnings name %s, want 1", found, names[i])
			}
		})
	}
	moved, err := os.ReadDir(filepath.Join(dir, store.CorruptDir))
	if err != nil || len(moved) != len(corrupt)+1 {
		t.Fatalf("sessions/corrupt holds %d files (%v), want %d", len(moved), err, len(corrupt)+1)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, store.CorruptDir, names[0])); string(b) != "earlier" {
		t.Errorf("the file moved aside earlier was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, store.CorruptDir, names[0]+".1")); string(b) != `{}` {
		t.Errorf("the second %s was not moved aside beside the first: %q", names[0], b)
	}
	if _, err := os.Stat(filepath.Join(dir, "."+good+".json.tmp123456")); err == nil {
		t.Error("the interrupted write's temporary file was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("a file that is not a record was touched: %v", err)
	}
	if rec, err := tn.store.Get(good); err != nil || rec.Session.State != stateCompleted {
		t.Errorf("the valid record: %+v, %v", rec, err)
	}
	if rec, err := tn.store.Get(running); err != nil || rec.Session.State != stateAborted {
		t.Errorf("the open session's record: %+v, %v; want it aborted", rec, err)
	}

	// The next start has nothing to say.
	tn.stop()
	again := startNode(t, cfg)
	for _, rec := range again.logs.all() {
		if strings.Contains(rec.Msg, "unreadable") {
			t.Errorf("the second start warned again: %s %v", rec.Msg, rec.Attrs)
		}
	}
	if list, err := again.api.Sessions(t.Context()); err != nil || len(list) != 2 {
		t.Errorf("the API lists %d sessions (%v), want 2", len(list), err)
	}
}

// TestStoredResultsAfterStop: once a daemon is down, its completed session
// reads from the data directory (store.StoredResult, store.StoredSessions) as its API
// served it, without the lock the stopped daemon held.
func TestStoredResultsAfterStop(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	id, err := nodes[0].StartSession(pingSpec(2, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitEnded(t, nodes[0], id, 15*time.Second); got.State != apitype.StateCompleted {
		t.Fatalf("session %s: %s", got.State, got.Reason)
	}
	live, err := nodes[0].sessionRecord(id)
	if err != nil {
		t.Fatal(err)
	}
	nodes[0].stop()
	res, err := store.StoredResult(nodes[0].cfg, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.State != apitype.StateCompleted || string(res.Result) != string(live.Result) || len(res.Result) == 0 {
		t.Errorf("stored result %s %s, the API's %s", res.Session.State, res.Result, live.Result)
	}
	list, errs := store.StoredSessions(nodes[0].cfg)
	if len(errs) != 0 || len(list) != 1 || list[0].ID != id || list[0].Spec != "" {
		t.Errorf("stored sessions %+v, errors %v; want %s alone, without its spec", list, errs, id)
	}
	if _, err := store.StoredResult(nodes[0].cfg, "fedcba9876543210"); !errors.Is(err, store.ErrNoStoredSession) {
		t.Errorf("an unknown session: %v", err)
	}
}

// putEnded stores the record of session number i, which ended (in state)
// at end, as a run of standing session name ("" for none) with result.
func putEnded(t *testing.T, s *store.Store, i int, state, name string, end time.Time, result string) string {
	t.Helper()
	id := fmt.Sprintf("%016x", i+1)
	created := end.Add(-time.Second)
	rec := &store.Record{Session: apitype.Session{ID: id, Protocol: "ping", Name: name, State: state, Created: created, Finished: &end}}
	if result != "" {
		rec.Result = json.RawMessage(result)
	}
	if err := s.Put(rec); err != nil {
		t.Fatal(err)
	}
	return id
}

// logMessages returns the message of each line ("time level msg k=v ...").
func logMessages(lines []string) []string {
	var out []string
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		if len(f) < 3 {
			out = append(out, line)
			continue
		}
		msg, _, _ := strings.Cut(f[2], "=")
		if i := strings.LastIndex(msg, " "); i >= 0 && strings.Contains(f[2], "=") {
			msg = msg[:i]
		}
		out = append(out, msg)
	}
	return out
}

// errDiskRefuses is the failure a test injects into a store's writes: what
// a sessions directory that turned read-only answers.
var errDiskRefuses = &os.PathError{Op: "open", Path: "sessions", Err: syscall.EROFS}
