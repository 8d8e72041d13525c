// Package store keeps what a daemon must not lose: each session's record
// (its state, result and local outcome) under DATA_DIR/sessions, written
// atomically and journaled when the disk refuses it (unsaved.go), the
// retention policy that removes records of ended sessions and the run
// summaries of standing sessions it keeps (retention.go), the per-session
// logs (sessionlog.go), the lock that keeps two daemons off one data
// directory, and the read-only view of a stopped daemon's records
// (stored.go).
//
// It imports the config schema and the API's JSON types, nothing of the
// session runtime, the network or the control API (TestDependencies).
package store
