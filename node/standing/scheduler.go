package standing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// StateFile is the scheduler's state, under the data directory.
const StateFile = "standing.json"

// connectPoll is how often a due run whose organizations are not all
// connected yet looks again (see step).
const connectPoll = 250 * time.Millisecond

// maxStandingWait bounds the scheduler's sleep: a clock stepped forward
// (or a suspended machine) is noticed within it.
const maxStandingWait = time.Minute

// Scheduler is the scheduler of the node's standing sessions ([[sessions]]):
// it proposes each when it is due, through the path of StartSession, one
// run of a session at a time (a due time that passes while a run is
// active is skipped), retries a run that aborted as its retry says, and
// keeps its state in DATA_DIR/standing.json, written atomically at every
// change, so that a restarted daemon resumes the schedule.
type Scheduler struct {
	d    Deps
	path string
	wake chan struct{}
	wg   sync.WaitGroup // the goroutines that wait for runs to end
	// metrics are the scheduler's Prometheus metrics.
	metrics *schedMetrics

	mu    sync.Mutex // guards items and ctx
	items map[string]*item
	ctx   context.Context // run's, once it runs: ends the waits for runs
}

// Deps is what the scheduler uses of its daemon, as values and
// functions, so that it knows nothing of how a session runs.
type Deps struct {
	Log   *slog.Logger
	Store *store.Store
	// Registry takes the scheduler's metrics.
	Registry prometheus.Registerer
	// Start proposes a run of a spec checked at load, as StartSession
	// does, and returns its session ID.
	Start func(spec *protocol.CheckedSpec, name string) (string, error)
	// Done returns a channel closed when the session id ends, nil if the
	// daemon holds no such session (it ended already).
	Done func(id string) <-chan struct{}
	// Connected reports whether the organization of the address book
	// named is connected; true for this daemon's own name.
	Connected func(name string) bool
	// ProposeTimeout returns session.propose_timeout in force.
	ProposeTimeout func() time.Duration
}

// item is one standing session: its config and its state.
type item struct {
	cfg   config.StandingConfig
	sched config.Schedule
	st    State
	// orgs are the address-book names of the spec's organizations.
	orgs []string
	// waiting is when a due run of it started to wait for its
	// organizations to be connected; zero when it does not.
	waiting time.Time
}

// newItem returns the item of sc, with its state to be set.
func newItem(sc config.StandingConfig) (*item, error) {
	sched, err := sc.Schedule()
	if err != nil {
		return nil, err
	}
	if sc.Checked == nil {
		return nil, fmt.Errorf("the spec %s was not checked", sc.Spec)
	}
	it := &item{cfg: sc, sched: sched}
	for _, names := range sc.Checked.Spec.Roles.Roles {
		it.orgs = append(it.orgs, names...)
	}
	return it, nil
}

// New builds the scheduler of sessions, resuming the state that a
// previous daemon stored in dataDir at now. A run that state shows active
// ended when that daemon stopped (recoverSessions recorded it): its record
// says how, and a retry follows if it aborted.
func New(d Deps, cfg *config.Config, now time.Time) *Scheduler {
	sessions := cfg.Sessions
	st := &Scheduler{d: d, path: filepath.Join(cfg.Node.DataDir, StateFile),
		wake: make(chan struct{}, 1), items: map[string]*item{}, ctx: context.Background()}
	st.metrics = newMetrics(st)
	d.Registry.MustRegister(st.metrics)
	stored, err := readStandingState(st.path)
	if err != nil {
		d.Log.Warn("the standing sessions' schedule could not be read; starting afresh", "err", err)
	}
	for _, sc := range sessions {
		it, err := newItem(sc)
		if err != nil {
			continue // checked at load
		}
		if old, ok := stored[sc.Name]; ok {
			it.st = old.boot(it.sched, now)
			if it.st.Active != "" {
				state, reason := apitype.StateAborted, fmt.Sprintf("%s stopped while the run was open", cfg.Node.Name)
				if rec, err := d.Store.Get(it.st.Active); err == nil {
					state, reason = rec.Session.State, rec.Session.Reason
				}
				it.st = it.st.ended(it.st.Active, state, reason, sc.Retry, now)
			}
		} else {
			it.st = freshState(it.sched, now)
		}
		st.items[sc.Name] = it
	}
	if len(st.items) > 0 || len(stored) > 0 {
		st.save()
	}
	return st
}

// readStandingState reads the state file at path; none is an empty state.
func readStandingState(path string) (map[string]State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]State
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return m, nil
}

// save stores the state of every session. mu is held, or the scheduler
// does not run yet.
func (st *Scheduler) save() {
	if st.d.Store.Frozen.Load() {
		return // the daemon has stopped (or crashed, in a test)
	}
	m := make(map[string]State, len(st.items))
	for name, it := range st.items {
		m[name] = it.st
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = store.WriteFileAtomic(st.path, data, 0o600)
	}
	if err != nil {
		st.d.Log.Error("could not store the standing sessions' schedule", "file", st.path, "err", err)
	}
}

// poke wakes the scheduler's loop.
func (st *Scheduler) poke() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// Run proposes the standing sessions when due until ctx ends; it then
// waits for the goroutines that watch runs (they end with ctx too).
func (st *Scheduler) Run(ctx context.Context) {
	st.mu.Lock()
	st.ctx = ctx
	st.mu.Unlock()
	defer st.wg.Wait()
	for {
		wait := st.step(time.Now())
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-st.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// step proposes every session due at now, skips the due times of sessions
// whose run is still active, and returns how long to sleep.
func (st *Scheduler) step(now time.Time) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ctx.Err() != nil {
		return maxStandingWait
	}
	changed := false
	for _, name := range slices.Sorted(maps.Keys(st.items)) {
		it := st.items[name]
		if it.st.Active != "" {
			if !it.st.Due.IsZero() && !it.st.Due.After(now) {
				it.st = it.st.skip(it.sched, now)
				st.d.Log.Warn("a standing session is due while its last run is still active; skipped this time",
					"name", name, "active", it.st.Active, "next_due", it.st.Due.Local().Format(time.DateTime))
				changed = true
			}
			continue
		}
		due, retry := it.st.due(now)
		if !due {
			continue
		}
		// A run due when the daemon has just started, or when a peer is
		// away for a moment, waits for its organizations to be
		// connected, at most session.propose_timeout: proposed at once,
		// it would abort on a peer that is still being dialed.
		if !st.connected(it) {
			if it.waiting.IsZero() {
				it.waiting = now
			}
			if now.Sub(it.waiting) < st.d.ProposeTimeout() {
				continue
			}
		}
		it.waiting = time.Time{}
		st.launch(name, it, retry, now)
		changed = true
	}
	if changed {
		st.save()
	}
	wait := maxStandingWait
	for _, it := range st.items {
		if !it.waiting.IsZero() {
			wait = min(wait, connectPoll) // its due time has passed
			continue
		}
		if w := it.st.wake(); !w.IsZero() {
			wait = min(wait, max(w.Sub(now), 0))
		}
	}
	return wait
}

// connected reports whether every organization of it's spec other than
// this node is connected.
func (st *Scheduler) connected(it *item) bool {
	for _, name := range it.orgs {
		if !st.d.Connected(name) {
			return false
		}
	}
	return true
}

// launch proposes a run of it. mu is held.
func (st *Scheduler) launch(name string, it *item, retry bool, now time.Time) {
	id, err := st.d.Start(it.cfg.Checked, name)
	it.st = it.st.launched(it.sched, id, retry, now)
	if err != nil {
		it.st = it.st.ended("", apitype.StateAborted, "could not be proposed: "+err.Error(), it.cfg.Retry, now)
		st.metrics.ended(name, apitype.StateAborted)
		st.d.Log.Error("could not propose a standing session", "name", name, "retry", retry, "err", err,
			"retry_at", fmtTime(it.st.RetryAt), "next_due", fmtTime(it.st.Due))
		return
	}
	st.d.Log.Info("proposed a standing session", "name", name, "session", id, "retry", retry, "next_due", fmtTime(it.st.Due))
	ctx := st.ctx
	st.wg.Go(func() {
		if done := st.d.Done(id); done != nil {
			select {
			case <-done:
			case <-ctx.Done():
				return // the daemon stops; the next one reads the record (newStanding)
			}
		}
		state, reason := apitype.StateAborted, "its record could not be read"
		if rec, err := st.d.Store.Get(id); err == nil {
			state, reason = rec.Session.State, rec.Session.Reason
		}
		st.finish(name, id, state, reason, time.Now())
	})
}

// finish records that run id of session name ended.
func (st *Scheduler) finish(name, id, state, reason string, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	it := st.items[name]
	if it == nil || it.st.Active != id {
		return // the session was removed or changed meanwhile
	}
	it.st = it.st.ended(id, state, reason, it.cfg.Retry, now)
	st.metrics.ended(name, state)
	st.d.Log.Info("a standing session's run ended", "name", name, "session", id, "state", state,
		"retry_at", fmtTime(it.st.RetryAt), "next_due", fmtTime(it.st.Due))
	st.save()
	st.poke()
}

// Update replaces the standing sessions with sessions (a config reload):
// a session whose name is new starts afresh, as at boot; one whose
// schedule changed starts afresh but keeps its active run and last run;
// one that is unchanged, or changed only in its spec or retry, keeps its
// state and takes the new config from its next run; one that is gone is
// forgotten (a run of it in progress goes on, and is recorded under its
// name as any other).
func (st *Scheduler) Update(sessions []config.StandingConfig) {
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	items := map[string]*item{}
	for _, sc := range sessions {
		it, err := newItem(sc)
		if err != nil {
			st.d.Log.Error("ignoring a standing session with an invalid schedule", "name", sc.Name, "err", err)
			continue
		}
		sched := it.sched
		if old, ok := st.items[sc.Name]; ok {
			it.st = old.st
			if old.sched.String() != sched.String() {
				fresh := freshState(sched, now)
				fresh.Active, fresh.Proposed, fresh.Last = old.st.Active, old.st.Proposed, old.st.Last
				it.st = fresh
			}
		} else {
			it.st = freshState(sched, now)
		}
		items[sc.Name] = it
	}
	for name := range st.items {
		if _, ok := items[name]; !ok {
			st.d.Log.Info("a standing session was removed from the config", "name", name)
		}
	}
	st.items = items
	st.save()
	st.poke()
}

// List returns the standing sessions, by name.
func (st *Scheduler) List() []apitype.Standing {
	st.mu.Lock()
	defer st.mu.Unlock()
	return describe(st.items)
}

// describe describes items, by name.
func describe(items map[string]*item) []apitype.Standing {
	out := make([]apitype.Standing, 0, len(items))
	for _, name := range slices.Sorted(maps.Keys(items)) {
		it := items[name]
		s := apitype.Standing{Name: name, Schedule: it.sched.String(), Retries: it.st.Retries, Active: it.st.Active,
			NextDue: timePtr(it.st.Due), RetryAt: timePtr(it.st.RetryAt), Last: it.st.Last}
		s.Protocol = it.cfg.Checked.Spec.Protocol
		out = append(out, s)
	}
	return out
}

// Stored lists the standing sessions of cfg as the daemon last
// stored their schedule in its data directory, for a command run while the
// daemon is down. A session the daemon has not run yet has no next due
// time.
func Stored(cfg *config.Config) ([]apitype.Standing, error) {
	stored, err := readStandingState(filepath.Join(cfg.Node.DataDir, StateFile))
	items := map[string]*item{}
	for _, sc := range cfg.Sessions {
		it, ierr := newItem(sc)
		if ierr != nil {
			continue
		}
		if old, ok := stored[sc.Name]; ok && old.Schedule == it.sched.String() {
			it.st = old
		}
		items[sc.Name] = it
	}
	return store.At(cfg).WithSummaries(describe(items)), err
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// fmtTime formats t for a log line, "-" for none.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}
