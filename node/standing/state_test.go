package standing

import (
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
)

// TestStandingStateTransitions follows a session's state through runs,
// skips, aborts with retries and a daemon that was down.
func TestStandingStateTransitions(t *testing.T) {
	every := config.Schedule{Every: time.Hour}
	retry := config.RetryConfig{Attempts: 2, Backoff: config.Duration{Duration: 10 * time.Minute}}
	t0 := at3("2026-11-23 10:00:00")
	after := func(d time.Duration) time.Time { return t0.Add(d) }

	st := freshState(every, t0)
	if due, r := st.due(t0); !due || r {
		t.Fatalf("fresh: due %v retry %v; want due now", due, r)
	}
	st = st.launched(every, "a1", false, t0)
	if st.Active != "a1" || !st.Due.Equal(after(time.Hour)) {
		t.Fatalf("launched: %+v", st)
	}
	if due, _ := st.due(after(2 * time.Hour)); due {
		t.Fatal("due while a run is active")
	}
	// Due passes while a1 runs: skipped, not queued.
	st = st.skip(every, after(time.Hour+time.Minute))
	if !st.Due.Equal(after(2 * time.Hour)) {
		t.Fatalf("skip: due %v", st.Due)
	}
	st = st.ended("a1", "aborted", "node2 is shutting down", retry, after(time.Hour+2*time.Minute))
	if st.Active != "" || !st.RetryAt.Equal(after(time.Hour+12*time.Minute)) || st.Last.ID != "a1" || !st.Last.Proposed.Equal(t0) {
		t.Fatalf("ended aborted: %+v, last %+v", st, st.Last)
	}
	if !st.wake().Equal(st.RetryAt) {
		t.Errorf("wake %v, want the retry %v", st.wake(), st.RetryAt)
	}
	// Two retries, both aborting; then no more until the next due time.
	now := st.RetryAt
	for i := 1; i <= 2; i++ {
		due, r := st.due(now)
		if !due || !r {
			t.Fatalf("retry %d: due %v retry %v", i, due, r)
		}
		st = st.launched(every, "r", true, now)
		if st.Retries != i || !st.Due.Equal(after(2*time.Hour)) {
			t.Fatalf("retry %d launched: %+v", i, st)
		}
		now = now.Add(time.Minute)
		st = st.ended("r", "aborted", "x", retry, now)
		now = now.Add(10 * time.Minute)
	}
	if !st.RetryAt.IsZero() {
		t.Fatalf("a third retry scheduled: %+v", st)
	}
	if due, _ := st.due(now); due {
		t.Fatalf("due at %v after the retries ran out: %+v", now, st)
	}
	// The daemon is down from now until 5h30: the due time of 12:00 and
	// the four after it collapse into one run, and the retries start over.
	st = st.boot(every, after(5*time.Hour+30*time.Minute))
	now = after(5*time.Hour + 30*time.Minute)
	if due, r := st.due(now); !due || r {
		t.Fatalf("after a restart: due %v retry %v; want a regular run", due, r)
	}
	st = st.launched(every, "c", false, now)
	if !st.Due.Equal(after(6*time.Hour)) || st.Retries != 0 {
		t.Fatalf("after the catch-up run: %+v", st)
	}
	st = st.ended("c", "completed", "", retry, now.Add(time.Minute))
	if !st.RetryAt.IsZero() || st.Last.State != "completed" {
		t.Fatalf("completed: %+v", st)
	}
	if due, _ := st.due(now.Add(2 * time.Minute)); due {
		t.Fatal("due again right after the catch-up run")
	}
	// A changed schedule starts afresh, keeping the last run.
	st = st.boot(config.Schedule{Every: 2 * time.Hour}, now)
	if !st.Due.Equal(now) || st.Last == nil {
		t.Fatalf("changed schedule: %+v", st)
	}
	// On-boot: due at every boot, once.
	boot := config.Schedule{OnBoot: true}
	ob := freshState(boot, t0).launched(boot, "b", false, t0).ended("b", "completed", "", retry, t0)
	if due, _ := ob.due(after(48 * time.Hour)); due {
		t.Fatal("on-boot session due again without a boot")
	}
	if due, _ := ob.boot(boot, after(48*time.Hour)).due(after(48 * time.Hour)); !due {
		t.Fatal("on-boot session not due at a boot")
	}
}

// utc3 is a fixed local time for the schedule tests, free of DST.
var utc3 = time.FixedZone("UTC+3", 3*3600)

func at3(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", s, utc3)
	if err != nil {
		panic(err)
	}
	return t
}
