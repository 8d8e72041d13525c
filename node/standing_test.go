package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/standing"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
)

// standingPing is a standing ping session between node1 and node2.
func standingPing(name string, count int, every time.Duration) config.StandingConfig {
	text := pingSpec(count, "node1", "node2")
	return config.StandingConfig{Name: name, Spec: name + ".toml", Every: config.Duration{Duration: every},
		Retry: config.RetryConfig{Backoff: config.Duration{Duration: config.DefaultRetryBackoff}}, SpecText: text, Checked: checkedSpec(text)}
}

// checkedSpec parses and checks a ping spec, as the config's load does.
func checkedSpec(text []byte) *protocol.CheckedSpec {
	reg, err := protocol.NewRegistry(ping.Family{})
	if err != nil {
		panic(err)
	}
	spec, err := protocol.ParseSpec("spec", text)
	if err != nil {
		panic(err)
	}
	checked, err := reg.CheckSpec(spec)
	if err != nil {
		panic(err)
	}
	return checked
}

// namedRuns returns the records of tn's runs of the standing session name,
// newest first, through the control API.
func namedRuns(t *testing.T, tn *testNode, name string) []apitype.Session {
	t.Helper()
	runs, err := tn.api.SessionsNamed(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// standingOf returns tn's standing session name, through the control API.
func standingOf(t *testing.T, tn *testNode, name string) apitype.Standing {
	t.Helper()
	list, err := tn.api.Standing(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s lists no standing session %s: %+v", tn.cfg.Node.Name, name, list)
	return apitype.Standing{}
}

func countState(runs []apitype.Session, state string) int {
	n := 0
	for _, r := range runs {
		if r.State == state {
			n++
		}
	}
	return n
}

// TestStandingSessionRunsUnattended: a standing session every 2 s runs
// three times with nobody starting it; every run is recorded under its
// name at the initiator and at the participant, which saw the name in the
// proposal; a session started by hand has no name.
func TestStandingSessionRunsUnattended(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Sessions = []config.StandingConfig{standingPing("pinger", 3, 2*time.Second)}
		}
	})
	adhoc, err := nodes[0].StartSession(pingSpec(2, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, "three completed runs of pinger", func() bool {
		return countState(namedRuns(t, nodes[0], "pinger"), stateCompleted) >= 3
	})
	runs := namedRuns(t, nodes[0], "pinger")
	for _, r := range runs {
		if r.Name != "pinger" || !r.Local {
			t.Errorf("run %s: name %q, initiated here %v", r.ID, r.Name, r.Local)
		}
		if r.ID == adhoc {
			t.Errorf("the session started by hand is listed as a run of pinger")
		}
	}
	for _, r := range runs {
		if r.State != stateCompleted {
			continue
		}
		rec, err := nodes[1].sessionRecord(r.ID)
		if err != nil {
			t.Fatalf("node2 has no record of %s: %v", r.ID, err)
		}
		if rec.Session.Name != "pinger" {
			t.Errorf("node2's record of %s names %q", r.ID, rec.Session.Name)
		}
		if len(nodes[1].logs.find("accepted a session", "session", r.ID)) != 1 ||
			nodes[1].logs.find("accepted a session", "session", r.ID)[0].Attrs["name"] != "pinger" {
			t.Errorf("node2 did not log the name of %s when it accepted it", r.ID)
		}
	}
	if rec, err := nodes[0].sessionRecord(adhoc); err != nil || rec.Session.Name != "" {
		t.Errorf("the session started by hand: %+v, %v", rec, err)
	}
	s := standingOf(t, nodes[0], "pinger")
	if s.Schedule != "every = 2s" || s.Protocol != "ping" || s.NextDue == nil {
		t.Errorf("standing list: %+v", s)
	}
	// The scheduler's metrics.
	testutil.WaitFor(t, 10*time.Second, "three completed runs counted", func() bool {
		return standingSeries(t, nodes[0])[`bandit_standing_runs_total{name="pinger",state="completed"}`] >= 3
	})
	m := standingSeries(t, nodes[0])
	if due := m[`bandit_standing_next_due_timestamp_seconds{name="pinger"}`]; due < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("next due in the metrics: %v", due)
	}
	if _, ok := m[`bandit_standing_active{name="pinger"}`]; !ok {
		t.Errorf("no bandit_standing_active: %v", m)
	}
	if m[`bandit_standing_last_run_completed{name="pinger"}`] != 1 {
		t.Errorf("last run not completed in the metrics: %v", m)
	}
	all, err := nodes[0].api.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) <= len(runs) {
		t.Errorf("the unfiltered list has %d sessions, the runs of pinger %d", len(all), len(runs))
	}
}

// TestStandingSessionNotDoubled: a due time that passes while the last run
// is still active is skipped: there is never a second run of the session
// at once. Once the long run ends, the schedule goes on.
func TestStandingSessionNotDoubled(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Sessions = []config.StandingConfig{standingPing("long", ping.MaxCount, time.Second)}
		}
	})
	testutil.WaitFor(t, 30*time.Second, "two due times skipped while the first run is active", func() bool {
		return len(nodes[0].logs.find("a standing session is due while its last run is still active; skipped this time", "name", "long")) >= 2
	})
	runs := namedRuns(t, nodes[0], "long")
	if len(runs) != 1 || runs[0].State == stateCompleted || runs[0].State == stateAborted {
		t.Fatalf("runs of long while the first is active: %+v", runs)
	}
	first := runs[0].ID
	if s := standingOf(t, nodes[0], "long"); s.Active != first {
		t.Errorf("standing list: active %q, want %s", s.Active, first)
	}
	if err := nodes[0].CancelSession(first); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, "a second run once the first ended", func() bool {
		return len(namedRuns(t, nodes[0], "long")) >= 2
	})
	runs = namedRuns(t, nodes[0], "long")
	active := 0
	for _, r := range runs {
		if r.State != stateCompleted && r.State != stateAborted {
			active++
		}
	}
	if active > 1 {
		t.Errorf("%d runs of long active at once: %+v", active, runs)
	}
	s := standingOf(t, nodes[0], "long")
	if s.Last == nil || s.Last.ID != first || s.Last.State != stateAborted || !strings.Contains(s.Last.Reason, "cancelled by the operator of node1") {
		t.Errorf("last run: %+v", s.Last)
	}
}

// TestStandingSessionResumesAfterRestart: a restarted daemon resumes its
// schedule from its data directory: a run that already happened is not
// run again, and due times that passed while the daemon was down collapse
// into one run.
func TestStandingSessionResumesAfterRestart(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Sessions = []config.StandingConfig{standingPing("hourly", 3, time.Hour)}
		}
	})
	// The first run is due when the daemon first has the session.
	testutil.WaitFor(t, 30*time.Second, "the first run of hourly", func() bool {
		return countState(namedRuns(t, nodes[0], "hourly"), stateCompleted) == 1
	})
	var before apitype.Standing
	testutil.WaitFor(t, 10*time.Second, "the scheduler to record the first run's end", func() bool {
		before = standingOf(t, nodes[0], "hourly")
		return before.Active == "" && before.Last != nil
	})
	if before.NextDue == nil || before.Last == nil || time.Until(*before.NextDue) < 50*time.Minute {
		t.Fatalf("after the first run: %+v", before)
	}
	cfg := nodes[0].cfg
	nodes[0].stop()

	// Restarted well before the next due time: no run.
	again := startNode(t, cfg)
	after := standingOf(t, again, "hourly")
	if after.NextDue == nil || !after.NextDue.Equal(*before.NextDue) || after.Active != "" {
		t.Fatalf("after a restart: %+v; want next due %v and nothing active", after, before.NextDue)
	}
	if runs := namedRuns(t, again, "hourly"); len(runs) != 1 {
		t.Fatalf("after a restart, %d runs: %+v", len(runs), runs)
	}
	again.stop()

	// The daemon "was down" for three and a half periods: its stored
	// next due time is that far in the past. One run catches up, and the
	// next is due at the cadence of the old due time.
	path := filepath.Join(cfg.Node.DataDir, standing.StateFile)
	var stored map[string]standing.State
	if err := json.Unmarshal(must(os.ReadFile(path)), &stored); err != nil {
		t.Fatal(err)
	}
	st := stored["hourly"]
	st.Due = time.Now().Add(-3*time.Hour - 30*time.Minute).Round(0)
	stored["hourly"] = st
	if err := os.WriteFile(path, must(json.Marshal(stored)), 0o600); err != nil {
		t.Fatal(err)
	}
	third := startNode(t, cfg)
	testutil.WaitFor(t, 30*time.Second, "the catch-up run", func() bool {
		return countState(namedRuns(t, third, "hourly"), stateCompleted) == 2
	})
	var s apitype.Standing
	testutil.WaitFor(t, 10*time.Second, "the scheduler to record the catch-up run's end", func() bool {
		s = standingOf(t, third, "hourly")
		return s.Active == ""
	})
	if want := st.Due.Add(4 * time.Hour); s.NextDue == nil || !s.NextDue.Equal(want) || s.Active != "" {
		t.Fatalf("after the catch-up run: %+v; want next due %v", s, want)
	}
	if runs := namedRuns(t, third, "hourly"); len(runs) != 2 {
		t.Errorf("%d runs after the catch-up, want 2: %+v", len(runs), runs)
	}
}

// standingSeries gathers tn's bandit_standing_* series, keyed
// NAME{name="…"[,state="…"]}.
func standingSeries(t *testing.T, tn *testNode) map[string]float64 {
	t.Helper()
	families, err := tn.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "bandit_standing_") {
			continue
		}
		for _, mt := range f.GetMetric() {
			var labels []string
			for _, l := range mt.GetLabel() {
				labels = append(labels, l.GetName()+"=\""+l.GetValue()+"\"")
			}
			v := mt.GetGauge().GetValue()
			if mt.Counter != nil {
				v = mt.GetCounter().GetValue()
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestStandingSessionRefusedByName: a participant whose policy does not
// list the session's name declines it, with a reason naming it; the
// initiator records the abort and retries as the session's retry says,
// then waits for the next due time.
func TestStandingSessionRefusedByName(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			sc := standingPing("refused-one", 3, time.Hour)
			sc.Retry = config.RetryConfig{Attempts: 1, Backoff: config.Duration{Duration: 500 * time.Millisecond}}
			cfg.Sessions = []config.StandingConfig{sc}
		} else {
			pol := cfg.Policy["ping"]
			pol.Sessions = []string{"weekly-promo", ""}
			cfg.Policy["ping"] = pol
		}
	})
	testutil.WaitFor(t, 30*time.Second, "the run and its retry to be declined", func() bool {
		return countState(namedRuns(t, nodes[0], "refused-one"), stateAborted) == 2
	})
	for _, r := range namedRuns(t, nodes[0], "refused-one") {
		if !strings.Contains(r.Reason, `node2 does not accept the standing session "refused-one" of node1 (policy.ping.sessions)`) {
			t.Errorf("run %s: reason %q", r.ID, r.Reason)
		}
	}
	if d := nodes[1].logs.find("declined a session", "name", "refused-one"); len(d) != 2 {
		t.Errorf("node2 logged %d declines of refused-one, want 2", len(d))
	}
	s := standingOf(t, nodes[0], "refused-one")
	testutil.WaitFor(t, 10*time.Second, "the scheduler to record the retry's end", func() bool {
		s = standingOf(t, nodes[0], "refused-one")
		return s.Active == "" && s.Last != nil && s.Retries == 1
	})
	if s.RetryAt != nil || s.NextDue == nil || time.Until(*s.NextDue) < 30*time.Minute {
		t.Errorf("after the retries ran out: %+v", s)
	}
	// A session started by hand is still accepted ("" in the list).
	completedSession[ping.Matrix](t, nodes[0], string(pingSpec(2, "node1", "node2")), 30*time.Second)
}

// TestStandingUpdate: update (a config reload) adds, removes and changes
// standing sessions by name while the node runs.
func TestStandingUpdate(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Sessions = []config.StandingConfig{standingPing("kept", 3, time.Hour), standingPing("dropped", 3, time.Hour)}
		}
	})
	n := nodes[0]
	testutil.WaitFor(t, 30*time.Second, "the first runs", func() bool {
		return countState(namedRuns(t, n, "kept"), stateCompleted) == 1 && countState(namedRuns(t, n, "dropped"), stateCompleted) == 1
	})
	kept := standingOf(t, n, "kept")
	changed := standingPing("kept", 5, time.Hour) // a new spec, the same schedule
	added := standingPing("added", 3, time.Hour)
	n.standing.Update([]config.StandingConfig{changed, added})
	testutil.WaitFor(t, 30*time.Second, "the added session's first run", func() bool {
		return countState(namedRuns(t, n, "added"), stateCompleted) == 1
	})
	list, err := n.api.Standing(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "added" || list[1].Name != "kept" {
		t.Fatalf("standing after update: %+v", list)
	}
	if !list[1].NextDue.Equal(*kept.NextDue) || len(namedRuns(t, n, "kept")) != 1 {
		t.Errorf("kept lost its schedule: %+v, was %+v", list[1], kept)
	}
	// A changed schedule starts afresh: due at once.
	n.standing.Update([]config.StandingConfig{standingPing("kept", 3, 2*time.Hour), added})
	testutil.WaitFor(t, 30*time.Second, "kept's run under its new schedule", func() bool {
		return countState(namedRuns(t, n, "kept"), stateCompleted) == 2
	})
	if s := standingOf(t, n, "kept"); s.Schedule != "every = 2h" {
		t.Errorf("kept after its schedule changed: %+v", s)
	}
	// The stored state follows: a restart knows added, and not dropped.
	var stored map[string]standing.State
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(n.cfg.Node.DataDir, standing.StateFile))), &stored); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored["dropped"]; ok || len(stored) != 2 {
		t.Errorf("stored state: %+v", stored)
	}
}
