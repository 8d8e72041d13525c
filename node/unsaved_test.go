package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// errDiskRefuses is the failure a test injects into a store's writes: what
// a sessions directory that turned read-only answers.
var errDiskRefuses = &os.PathError{Op: "open", Path: "sessions", Err: syscall.EROFS}

// refuseSessionsDir makes tn's store fail every write under its sessions
// directory (not the journal's), but the first of each session's record
// (the one that admits the session), until the returned function is
// called: a disk that turns read-only once the session has started.
func refuseSessionsDir(tn *testNode) (restore func()) {
	dir := tn.store.dir + string(filepath.Separator)
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
	tn.store.failWrite.Store(&fail)
	return func() { tn.store.failWrite.Store(nil) }
}

// onDisk reads session id's record as the disk has it, not as the store
// serves it.
func onDisk(t testing.TB, tn *testNode, id string) *record {
	t.Helper()
	rec, err := readRecord(filepath.Join(sessionsDir(tn.cfg.Node.DataDir), id+".json"), id)
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
	tn.progressSave = 0 // every progress report is stored, and refused
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
	if j, err := readRecord(tn.store.journalPath(id), id); err != nil || j.Session.State != stateCompleted {
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
	if disk := onDisk(t, tn, id); !bytes.Equal(disk.Result, compactJSON(res.Result)) {
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
	if _, err := os.Stat(tn.store.journalPath(id)); !errors.Is(err, os.ErrNotExist) {
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
	served := map[string]*record{}
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
	if res, err := StoredResult(tn.cfg, id); err != nil || res.Session.State != stateCompleted || !bytes.Equal(res.Result, served["node1"].Result) {
		t.Errorf("StoredResult while down: %s, %v; want completed with its result", res.Session.State, err)
	}
	if list, errs := StoredSessions(tn.cfg); len(errs) != 0 || len(list) != 1 || list[0].State != stateCompleted {
		t.Errorf("StoredSessions while down: %+v, %v; want the session completed", list, errs)
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
		if _, err := os.Stat(restarted.store.journalPath(id)); !errors.Is(err, os.ErrNotExist) {
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
	dir := sessionsDir(tn.cfg.Node.DataDir)
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
			if rec.Msg == "declined a session" && strings.Contains(rec.Attrs["reason"], errStorage.Error()) {
				if rec.Level != slog.LevelWarn {
					t.Errorf("a decline for a storage failure is logged at %v, want WARN", rec.Level)
				}
				return true
			}
		}
		return false
	})

	// A session started before the directory turned immutable.
	mutable()
	id, err := tn.StartSession(pingSpec(30, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i: %v %s", err, out)
	}
	immutable = true
	if got := waitEnded(t, tn, id, 30*time.Second); got.State != stateCompleted {
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

// TestStoreServesUnsavedRecords: a record the disk refuses is what get,
// list and exists give (newer than the stored one), the retention policy
// does not remove it, and retry writes it once the disk takes writes.
func TestStoreServesUnsavedRecords(t *testing.T) {
	st, err := openStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour).UTC()
	rec := &record{Session: apitypeSession("00000000000000c1", stateRunning, old)}
	if err := st.put(rec); err != nil {
		t.Fatal(err)
	}
	fail := func(string) error { return errDiskRefuses }
	st.failWrite.Store(&fail)
	ended := &record{Session: apitypeSession("00000000000000c1", stateCompleted, old)}
	ended.Session.Finished = &old
	first, err := st.keep(ended)
	if !first || !errors.Is(err, errStorage) || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("keep on a refusing disk: first %v, err %v; want the first failure, wrapping errStorage and EROFS", first, err)
	}
	if first, _ := st.keep(ended); first {
		t.Errorf("a second failure of the same record is reported as the first")
	}
	if got, err := st.get("00000000000000c1"); err != nil || got.Session.State != stateCompleted {
		t.Errorf("get: %+v, %v; want the completed record kept in memory", got, err)
	}
	if recs, _ := st.list(); len(recs) != 1 || recs[0].Session.State != stateCompleted {
		t.Errorf("list: %d records, want the completed one", len(recs))
	}
	if st.journaled["00000000000000c1"] || st.failures.journal.Load() != 2 {
		t.Errorf("journaled %v, %d journal failures; the injected failure refuses the journal too",
			st.journaled["00000000000000c1"], st.failures.journal.Load())
	}
	if res, err := st.prune(retentionPolicy{keep: time.Hour}, time.Now(), func(string) bool { return false }); err != nil || res.Removed != 0 {
		t.Errorf("prune removed %d records (%v); want none while the record is unsaved", res.Removed, err)
	}
	if p := st.problem(); !strings.Contains(p, "cannot write session records: ") {
		t.Errorf("problem() = %q", p)
	}
	if err := st.retry(); err == nil {
		t.Errorf("retry succeeded on a disk that refuses writes")
	}
	st.failWrite.Store(nil)
	if err := st.retry(); err != nil {
		t.Fatalf("retry once the disk takes writes: %v", err)
	}
	disk, err := readRecord(filepath.Join(st.dir, "00000000000000c1.json"), "00000000000000c1")
	if err != nil || disk.Session.State != stateCompleted || st.unsavedCount() != 0 || st.problem() != "" {
		t.Errorf("after retry: disk %+v (%v), unsaved %d, problem %q", disk, err, st.unsavedCount(), st.problem())
	}
}

// TestJournalNewerThan: a journal copy replaces the stored record when it
// is a later state of the session.
func TestJournalNewerThan(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(state string, updated time.Time) *record {
		r := &record{Session: apitypeSession("00000000000000d1", state, t0)}
		r.Session.Updated = &updated
		return r
	}
	for _, c := range []struct {
		name           string
		journal, store *record
		want           bool
	}{
		{"no stored record", at(stateCompleted, t0), nil, true},
		{"ended over open", at(stateCompleted, t0), at(stateRunning, t0.Add(time.Minute)), true},
		{"open over ended", at(stateRunning, t0.Add(time.Minute)), at(stateAborted, t0), false},
		{"later progress", at(stateRunning, t0.Add(time.Minute)), at(stateRunning, t0), true},
		{"the same record, stored after all", at(stateCompleted, t0), at(stateCompleted, t0), false},
		{"older", at(stateRunning, t0), at(stateRunning, t0.Add(time.Minute)), false},
	} {
		if got := c.journal.newerThan(c.store); got != c.want {
			t.Errorf("%s: newerThan = %v, want %v", c.name, got, c.want)
		}
	}
}

// apitypeSession is a session record's head with the fields a valid
// record needs.
func apitypeSession(id, state string, created time.Time) apitype.Session {
	return apitype.Session{ID: id, State: state, Created: created, Protocol: "ping"}
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
