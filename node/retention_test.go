package node

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// retentionStore opens a store in a fresh data directory.
func retentionStore(t *testing.T) *store {
	t.Helper()
	s, err := openStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// putEnded stores the record of session number i, which ended (in state)
// at end, as a run of standing session name ("" for none) with result.
func putEnded(t *testing.T, s *store, i int, state, name string, end time.Time, result string) string {
	t.Helper()
	id := fmt.Sprintf("%016x", i+1)
	created := end.Add(-time.Second)
	rec := &record{Session: apitype.Session{ID: id, Protocol: "ping", Name: name, State: state, Created: created, Finished: &end}}
	if result != "" {
		rec.Result = json.RawMessage(result)
	}
	if err := s.put(rec); err != nil {
		t.Fatal(err)
	}
	return id
}

func storedIDs(t *testing.T, s *store) map[string]bool {
	t.Helper()
	recs, errs := s.list()
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
		ids = append(ids, putEnded(t, s, i, stateCompleted, "", t0.Add(time.Duration(i)*time.Minute), `{"n":1}`))
	}
	res, err := s.prune(retentionPolicy{keepCount: 100}, t0.Add(1000*time.Minute), noneActive)
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
	if res, err := s.prune(retentionPolicy{keepCount: 100}, t0.Add(1000*time.Minute), noneActive); err != nil || res.Removed != 0 {
		t.Errorf("second pass removed %d (%v), want 0", res.Removed, err)
	}
}

// keep removes the records of sessions that ended longer ago, as the clock
// given says; with keep_count too, a record must pass both.
func TestRetentionKeepByAge(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		p    retentionPolicy
		want int // records kept of the 10, ended 0..9 days ago
	}{
		{"forever", retentionPolicy{}, 10},
		{"3 days", retentionPolicy{keep: 3*24*time.Hour + time.Hour}, 4},
		{"3 days and 2 records", retentionPolicy{keep: 3*24*time.Hour + time.Hour, keepCount: 2}, 2},
		{"3 days and 8 records", retentionPolicy{keep: 3*24*time.Hour + time.Hour, keepCount: 8}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := retentionStore(t)
			var ids []string
			for d := range 10 {
				ids = append(ids, putEnded(t, s, d, stateCompleted, "", now.Add(-time.Duration(d)*24*time.Hour), ""))
			}
			if _, err := s.prune(c.p, now, noneActive); err != nil {
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
	running := putEnded(t, s, 1, stateRunning, "", old, "")
	proposed := putEnded(t, s, 2, stateProposed, "", old, "")
	ending := putEnded(t, s, 3, stateCompleted, "", old, "")
	gone := putEnded(t, s, 4, stateAborted, "", old, "")
	// Ended within the grace: peers may still ask about them.
	recent := putEnded(t, s, 5, stateCompleted, "", now.Add(-time.Minute), "")
	recent2 := putEnded(t, s, 6, stateAborted, "", now.Add(-30*time.Second), "")
	p := retentionPolicy{keep: time.Hour, keepCount: 1, grace: 2 * time.Minute}
	if _, err := s.prune(p, now, func(id string) bool { return id == ending }); err != nil {
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
	var recs []*record
	for i := range 10 {
		state, result := stateCompleted, fmt.Sprintf(`{"run":%d}`, i)
		if i%3 == 0 {
			state, result = stateAborted, ""
		}
		putEnded(t, s, i, state, "weekly", t0.Add(time.Duration(i)*time.Hour), result)
		rec, err := s.get(fmt.Sprintf("%016x", i+1))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	putEnded(t, s, 100, stateCompleted, "", t0, `{}`) // by hand: no summary
	now := t0.Add(20 * time.Hour)
	res, err := s.prune(retentionPolicy{keepCount: 3}, now, noneActive)
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
		sums, err := s.summaries()
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
		if err := s.put(rec); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := s.prune(retentionPolicy{keepCount: 3}, now, noneActive); err != nil || res.Removed != 7 {
		t.Fatalf("second pass: %+v, %v; want 7 removed", res, err)
	}
	check("after a pass over records already summarized")
	// The standing list shows the summary.
	list := s.withSummaries([]apitype.Standing{{Name: "weekly"}, {Name: "daily"}})
	if list[0].Removed == nil || list[0].Removed.Runs != 7 || list[1].Removed != nil {
		t.Errorf("standing list: %+v", list)
	}
}

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
			recs, _ := tn.store.list()
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
	s, err := openStore(cfg.Node.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := putEnded(t, s, 1, stateCompleted, "weekly", now.Add(-72*time.Hour), `{"x":1}`)
	recent := putEnded(t, s, 2, stateCompleted, "weekly", now.Add(-24*time.Hour), `{"x":2}`)
	s.close()
	tn, err := tryStartNode(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tn.stop)
	testutil.WaitFor(t, 20*time.Second, "the old record removed", func() bool { return !tn.store.exists(old) })
	if !tn.store.exists(recent) {
		t.Errorf("the record of a session that ended a day ago was removed (keep = 48h)")
	}
	sums, err := tn.store.summaries()
	if err != nil || sums["weekly"].Runs != 1 || sums["weekly"].LastID != old {
		t.Errorf("summaries %+v (%v), want weekly's run %s", sums, err, old)
	}
}
