// Package standing schedules a daemon's standing sessions ([[sessions]] in
// its config): it proposes each run when it is due, one run of a session at
// a time, waits for the session's organizations to be connected, retries a
// run that aborted as its retry table says, keeps its state in
// DATA_DIR/standing.json so that a restarted daemon resumes the schedule,
// and exposes that state to Prometheus and the control API.
//
// It reaches the daemon only through Deps (functions to propose a run, to
// wait for one, to ask whether a peer is connected), so it knows nothing of
// how a session runs (TestDependencies).
package standing
