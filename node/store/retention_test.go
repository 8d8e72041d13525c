package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// retentionStore opens a store in a fresh data directory.
func retentionStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// putEnded stores the record of session number i, which ended (in state)
// at end, as a run of standing session name ("" for none) with result.
func putEnded(t *testing.T, s *Store, i int, state, name string, end time.Time, result string) string {
	t.Helper()
	id := fmt.Sprintf("%016x", i+1)
	created := end.Add(-time.Second)
	rec := &Record{Session: apitype.Session{ID: id, Protocol: "ping", Name: name, State: state, Created: created, Finished: &end}}
	if result != "" {
		rec.Result = json.RawMessage(result)
	}
	if err := s.Put(rec); err != nil {
		t.Fatal(err)
	}
	return id
}

func storedIDs(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	recs, errs := s.List()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ids := map[string]bool{}
	for _, r := range recs {
		ids[r.Session.ID] = true
	}
	return ids
}

func noneActive(string) bool { return false }

// 500 short sessions with keep_count = 100: the newest 100 records remain.
func TestRetentionKeepCount(t *testing.T) {
	s := retentionStore(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 500 {
		ids = append(ids, putEnded(t, s, i, apitype.StateCompleted, "", t0.Add(time.Duration(i)*time.Minute), `{"n":1}`))
	}
	res, err := s.Prune(RetentionPolicy{KeepCount: 100}, t0.Add(1000*time.Minute), noneActive)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 400 {
		t.Errorf("removed %d, want 400", res.Removed)
	}
	got := storedIDs(t, s)
	if len(got) != 100 {
		t.Fatalf("%d records remain, want 100", len(got))
	}
	for i, id := range ids {
		if got[id] != (i >= 400) {
			t.Errorf("record %d (%s) kept = %v, want %v", i, id, got[id], i >= 400)
		}
	}
	// A second pass has nothing more to remove.
	if res, err := s.Prune(RetentionPolicy{KeepCount: 100}, t0.Add(1000*time.Minute), noneActive); err != nil || res.Removed != 0 {
		t.Errorf("second pass removed %d (%v), want 0", res.Removed, err)
	}
}

// keep removes the records of sessions that ended longer ago, as the clock
// given says; with keep_count too, a record must pass both.
func TestRetentionKeepByAge(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		p    RetentionPolicy
		want int // records kept of the 10, ended 0..9 days ago
	}{
		{"forever", RetentionPolicy{}, 10},
		{"3 days", RetentionPolicy{Keep: 3*24*time.Hour + time.Hour}, 4},
		{"3 days and 2 records", RetentionPolicy{Keep: 3*24*time.Hour + time.Hour, KeepCount: 2}, 2},
		{"3 days and 8 records", RetentionPolicy{Keep: 3*24*time.Hour + time.Hour, KeepCount: 8}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := retentionStore(t)
			var ids []string
			for d := range 10 {
				ids = append(ids, putEnded(t, s, d, apitype.StateCompleted, "", now.Add(-time.Duration(d)*24*time.Hour), ""))
			}
			if _, err := s.Prune(c.p, now, noneActive); err != nil {
				t.Fatal(err)
			}
			got := storedIDs(t, s)
			for d, id := range ids {
				if got[id] != (d < c.want) {
					t.Errorf("record ended %d days ago kept = %v, want %v", d, got[id], d < c.want)
				}
			}
		})
	}
}

// Active sessions are never removed: neither a record still proposed or
// running, however old, nor an ended record of a session still in progress
// here; nor are sessions that ended within the grace, beyond keep_count.
func TestRetentionKeepsActiveSessions(t *testing.T) {
	s := retentionStore(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-365 * 24 * time.Hour)
	running := putEnded(t, s, 1, apitype.StateRunning, "", old, "")
	proposed := putEnded(t, s, 2, apitype.StateProposed, "", old, "")
	ending := putEnded(t, s, 3, apitype.StateCompleted, "", old, "")
	gone := putEnded(t, s, 4, apitype.StateAborted, "", old, "")
	// Ended within the grace: peers may still ask about them.
	recent := putEnded(t, s, 5, apitype.StateCompleted, "", now.Add(-time.Minute), "")
	recent2 := putEnded(t, s, 6, apitype.StateAborted, "", now.Add(-30*time.Second), "")
	p := RetentionPolicy{Keep: time.Hour, KeepCount: 1, Grace: 2 * time.Minute}
	if _, err := s.Prune(p, now, func(id string) bool { return id == ending }); err != nil {
		t.Fatal(err)
	}
	got := storedIDs(t, s)
	for id, want := range map[string]bool{running: true, proposed: true, ending: true, gone: false, recent: true, recent2: true} {
		if got[id] != want {
			t.Errorf("record %s kept = %v, want %v", id, got[id], want)
		}
	}
}

// The runs of a standing session are summarized before their records go,
// and a run is counted once even if the records outlive the summary's
// write (a crash between the two).
func TestRetentionSummarizesStandingRuns(t *testing.T) {
	s := retentionStore(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []*Record
	for i := range 10 {
		state, result := apitype.StateCompleted, fmt.Sprintf(`{"run":%d}`, i)
		if i%3 == 0 {
			state, result = apitype.StateAborted, ""
		}
		putEnded(t, s, i, state, "weekly", t0.Add(time.Duration(i)*time.Hour), result)
		rec, err := s.Get(fmt.Sprintf("%016x", i+1))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	putEnded(t, s, 100, apitype.StateCompleted, "", t0, `{}`) // by hand: no summary
	now := t0.Add(20 * time.Hour)
	res, err := s.Prune(RetentionPolicy{KeepCount: 3}, now, noneActive)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 8 || len(res.Summarized) != 1 || res.Summarized[0] != "weekly" {
		t.Fatalf("pruned %+v, want 8 removed and weekly summarized", res)
	}
	// Runs 0..6 were removed: 0, 3, 6 aborted; the last, 6, had no
	// result, so the digest is run 5's.
	h := sha256.Sum256([]byte(`{"run":5}`))
	want := apitype.RunSummary{Runs: 7, Completed: 4, Aborted: 3, First: t0, Last: t0.Add(6 * time.Hour),
		LastID: fmt.Sprintf("%016x", 7), LastResult: hex.EncodeToString(h[:])}
	check := func(when string) {
		t.Helper()
		sums, err := s.Summaries()
		if err != nil {
			t.Fatal(err)
		}
		if got := sums["weekly"]; got != want {
			t.Errorf("%s: summary %+v, want %+v", when, got, want)
		}
		if len(sums) != 1 {
			t.Errorf("%s: summaries of %d names, want 1", when, len(sums))
		}
	}
	check("after the pass")
	// The removed records come back, as if the daemon had stopped after
	// storing the summary: they are removed again, not counted again.
	for _, rec := range recs[:7] {
		if err := s.Put(rec); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := s.Prune(RetentionPolicy{KeepCount: 3}, now, noneActive); err != nil || res.Removed != 7 {
		t.Fatalf("second pass: %+v, %v; want 7 removed", res, err)
	}
	check("after a pass over records already summarized")
	// The standing list shows the summary.
	list := s.WithSummaries([]apitype.Standing{{Name: "weekly"}, {Name: "daily"}})
	if list[0].Removed == nil || list[0].Removed.Runs != 7 || list[1].Removed != nil {
		t.Errorf("standing list: %+v", list)
	}
}
