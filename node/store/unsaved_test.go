package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// errDiskRefuses is the failure a test injects into a store's writes: what
// a sessions directory that turned read-only answers.
var errDiskRefuses = &os.PathError{Op: "open", Path: "sessions", Err: syscall.EROFS}

// TestStoreServesUnsavedRecords: a record the disk refuses is what get,
// list and exists give (newer than the stored one), the retention policy
// does not remove it, and retry writes it once the disk takes writes.
func TestStoreServesUnsavedRecords(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour).UTC()
	rec := &Record{Session: apitypeSession("00000000000000c1", apitype.StateRunning, old)}
	if err := st.Put(rec); err != nil {
		t.Fatal(err)
	}
	fail := func(string) error { return errDiskRefuses }
	st.FailWrite.Store(&fail)
	ended := &Record{Session: apitypeSession("00000000000000c1", apitype.StateCompleted, old)}
	ended.Session.Finished = &old
	first, err := st.Keep(ended)
	if !first || !errors.Is(err, ErrStorage) || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("keep on a refusing disk: first %v, err %v; want the first failure, wrapping errStorage and EROFS", first, err)
	}
	if first, _ := st.Keep(ended); first {
		t.Errorf("a second failure of the same record is reported as the first")
	}
	if got, err := st.Get("00000000000000c1"); err != nil || got.Session.State != apitype.StateCompleted {
		t.Errorf("get: %+v, %v; want the completed record kept in memory", got, err)
	}
	if recs, _ := st.List(); len(recs) != 1 || recs[0].Session.State != apitype.StateCompleted {
		t.Errorf("list: %d records, want the completed one", len(recs))
	}
	if st.journaled["00000000000000c1"] || st.Failures.Journal.Load() != 2 {
		t.Errorf("journaled %v, %d journal failures; the injected failure refuses the journal too",
			st.journaled["00000000000000c1"], st.Failures.Journal.Load())
	}
	if res, err := st.Prune(RetentionPolicy{Keep: time.Hour}, time.Now(), func(string) bool { return false }); err != nil || res.Removed != 0 {
		t.Errorf("prune removed %d records (%v); want none while the record is unsaved", res.Removed, err)
	}
	if p := st.Problem(); !strings.Contains(p, "cannot write session records: ") {
		t.Errorf("problem() = %q", p)
	}
	if err := st.retry(); err == nil {
		t.Errorf("retry succeeded on a disk that refuses writes")
	}
	st.FailWrite.Store(nil)
	if err := st.retry(); err != nil {
		t.Fatalf("retry once the disk takes writes: %v", err)
	}
	disk, err := ReadRecord(filepath.Join(st.Dir, "00000000000000c1.json"), "00000000000000c1")
	if err != nil || disk.Session.State != apitype.StateCompleted || st.UnsavedCount() != 0 || st.Problem() != "" {
		t.Errorf("after retry: disk %+v (%v), unsaved %d, problem %q", disk, err, st.UnsavedCount(), st.Problem())
	}
}

// TestJournalNewerThan: a journal copy replaces the stored record when it
// is a later state of the session.
func TestJournalNewerThan(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(state string, updated time.Time) *Record {
		r := &Record{Session: apitypeSession("00000000000000d1", state, t0)}
		r.Session.Updated = &updated
		return r
	}
	for _, c := range []struct {
		name           string
		journal, store *Record
		want           bool
	}{
		{"no stored record", at(apitype.StateCompleted, t0), nil, true},
		{"ended over open", at(apitype.StateCompleted, t0), at(apitype.StateRunning, t0.Add(time.Minute)), true},
		{"open over ended", at(apitype.StateRunning, t0.Add(time.Minute)), at(apitype.StateAborted, t0), false},
		{"later progress", at(apitype.StateRunning, t0.Add(time.Minute)), at(apitype.StateRunning, t0), true},
		{"the same record, stored after all", at(apitype.StateCompleted, t0), at(apitype.StateCompleted, t0), false},
		{"older", at(apitype.StateRunning, t0), at(apitype.StateRunning, t0.Add(time.Minute)), false},
	} {
		if got := c.journal.NewerThan(c.store); got != c.want {
			t.Errorf("%s: newerThan = %v, want %v", c.name, got, c.want)
		}
	}
}

// apitypeSession is a session record's head with the fields a valid
// record needs.
func apitypeSession(id, state string, created time.Time) apitype.Session {
	return apitype.Session{ID: id, State: state, Created: created, Protocol: "ping"}
}
