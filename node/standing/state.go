package standing

import (
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// State is what the scheduler keeps of one standing session, and
// stores in the data directory (standing.json) so that a restarted daemon
// resumes its schedule. Its methods are pure: the clock is an argument.
type State struct {
	// Schedule is the schedule the state was computed for (its String):
	// a session whose schedule changes starts afresh.
	Schedule string `json:"schedule"`
	// Due is when the next regular run is due; zero for none (an on-boot
	// session after its run).
	Due time.Time `json:"due,omitzero"`
	// RetryAt is when a run that aborted is tried again; zero for none.
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Retries counts the retries made since the last regular run.
	Retries int `json:"retries,omitempty"`
	// Active is the ID of the run in progress, and Proposed when it was
	// proposed.
	Active   string    `json:"active,omitempty"`
	Proposed time.Time `json:"proposed,omitzero"`
	// Last is the last run that ended.
	Last *apitype.StandingRun `json:"last,omitempty"`
}

// freshState is the state of a session with schedule sched that the
// scheduler has just been given (at boot with no stored state, or added by
// a reload) at now.
func freshState(sched config.Schedule, now time.Time) State {
	return State{Schedule: sched.String(), Due: sched.First(now)}
}

// boot is the state, stored by a daemon that stopped, of a session with
// schedule sched, for the daemon that starts at now: its schedule resumes
// (a due time that passed while the daemon was down is due at once, and
// only once); an on-boot session is due again; a schedule that changed
// starts afresh.
func (st State) boot(sched config.Schedule, now time.Time) State {
	if st.Schedule != sched.String() {
		fresh := freshState(sched, now)
		fresh.Active, fresh.Proposed, fresh.Last = st.Active, st.Proposed, st.Last
		return fresh
	}
	if sched.OnBoot {
		st.Due = now
	}
	return st
}

// due reports whether a run is due at now, and whether it is a retry.
// Nothing is due while a run is active.
func (st State) due(now time.Time) (due, retry bool) {
	if st.Active != "" {
		return false, false
	}
	if !st.Due.IsZero() && !st.Due.After(now) {
		return true, false
	}
	if !st.RetryAt.IsZero() && !st.RetryAt.After(now) {
		return true, true
	}
	return false, false
}

// wake is the next time at which something may be due: the earlier of Due
// and RetryAt, zero if neither is set. While a run is active it is Due,
// which is then skipped.
func (st State) wake() time.Time {
	w := st.Due
	if !st.RetryAt.IsZero() && (w.IsZero() || st.RetryAt.Before(w)) && st.Active == "" {
		w = st.RetryAt
	}
	return w
}

// launched records that run id was proposed at now; retry says whether it
// was a retry. A regular run moves Due to the next due time (the missed
// ones collapsing into it) and clears the retries.
func (st State) launched(sched config.Schedule, id string, retry bool, now time.Time) State {
	if retry {
		st.RetryAt = time.Time{}
		st.Retries++
	} else {
		st.Due = sched.Next(st.Due, now)
		st.RetryAt, st.Retries = time.Time{}, 0
	}
	st.Active, st.Proposed = id, now
	return st
}

// skip moves a Due that passed while a run was active to the next due
// time: the scheduler never starts a second run of a session, and does not
// queue one either.
func (st State) skip(sched config.Schedule, now time.Time) State {
	st.Due = sched.Next(st.Due, now)
	return st
}

// ended records that the active run (or a run that could not be proposed,
// with an empty ID) ended in state with reason at now, and schedules a
// retry after an abort if retry allows one more.
func (st State) ended(id, state, reason string, retry config.RetryConfig, now time.Time) State {
	proposed := st.Proposed
	if proposed.IsZero() {
		proposed = now
	}
	st.Last = &apitype.StandingRun{ID: id, State: state, Reason: reason, Proposed: proposed, Finished: now}
	st.Active, st.Proposed = "", time.Time{}
	if state != apitype.StateCompleted && st.Retries < retry.Attempts {
		st.RetryAt = now.Add(retry.Backoff.Duration)
	}
	return st
}
