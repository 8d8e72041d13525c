package protocol

import (
	"io"
	"log/slog"
	"time"
)

// Role is one party's state machine. A driver calls Start once, then Step for
// every message addressed to the party and Tick at a fixed interval, and after
// each call carries out the batch returned by Ready. A Role is not safe for
// concurrent use; its driver serializes every call. Different roles may be
// called at the same time (the simulator's parallel driver), so a role shares
// no mutable state with another party's role, and the batch Ready returns
// belongs to the driver: the role keeps neither its slices nor the bodies.
//
// Step returns an error when a message is malformed or impossible at this point
// of the protocol (the driver then aborts the session naming the sender). A role
// panics only on a broken invariant of its own.
type Role interface {
	// Start begins the protocol; the role may queue its first messages.
	Start() error
	// Step feeds one received message to the role.
	Step(m Message) error
	// Tick advances the role's notion of time by one tick.
	Tick() error
	// Ready returns and clears what the role has queued since the last call.
	Ready() Ready
}

// Ready is the batch of work a role hands its driver. The driver sends the
// messages in order, records the progress and, when Result is set, stores the
// result durably; the role is then finished and receives no further calls.
type Ready struct {
	// Messages to send, in order.
	Messages []Message
	// Progress is the role's latest progress, or nil if unchanged.
	Progress *Progress
	// Result is set exactly once, when the role has finished.
	Result *Result
	// Queries are what the role asks its environment (an Asker's), in
	// order: the driver answers each through Asker.Answer before anything
	// else reaches the role.
	Queries []Query
}

// Empty reports whether the batch has nothing to do.
func (r Ready) Empty() bool {
	return len(r.Messages) == 0 && r.Progress == nil && r.Result == nil && len(r.Queries) == 0
}

// Progress counts a role's work: Step of Total units are done. Activity is a
// counter of the role's work that need not have a total (an agent's
// interactions); the daemon treats a session whose steps and activity both
// stand still for session.stall_timeout as stuck.
type Progress struct {
	Step     int64
	Total    int64
	Activity int64
}

// Result is what a finished role produced.
type Result struct {
	// Report is what this party discloses to the session's initiator, in the
	// family's encoding; the initiator combines all reports with Family.Combine.
	// It must hold nothing the party's organization is not entitled to disclose.
	Report []byte
	// Local is what only this party's organization keeps (it is stored in the
	// organization's own result store, JSON-encoded, and never sent).
	Local any
}

// Clock tells a role the time. Drivers inject it: the daemon a wall clock, the
// simulator a virtual one.
type Clock interface {
	Now() time.Time
}

// RoleConfig is everything a role is built from.
type RoleConfig struct {
	// SessionID identifies the session; roles bind it into what they protect.
	SessionID string
	// Self is the party this role plays.
	Self Party
	// Assignment lists every party of the session and who plays it.
	Assignment Assignment
	// Params are the session's public parameters, as returned by Family.ParseParams.
	Params any
	// Local is this party's private data, as returned by Family.DecodeLocal or
	// Family.PrepareSimulation; nil when the role needs none.
	Local any
	// Rand is the role's source of randomness: crypto/rand in a real session, a
	// seeded stream in a simulation.
	Rand io.Reader
	// Clock tells the time.
	Clock Clock
	// Logger receives the role's log lines; never nil.
	Logger *slog.Logger
	// Simulated is set by the simulator only. A simulated role draws even its
	// differential-privacy noise from Rand, so that a run replays exactly from
	// its seed; a real session always uses the secure samplers.
	Simulated bool
	// Workers and Parallel let a role spread independent pieces of one step
	// over cores the driver has to spare: Parallel(n, f) calls f(w, i) for
	// every i in [0, n) and returns when all calls have returned; w, in
	// [0, Workers), names the goroutine making the call — calls with the same
	// w never overlap, so f may use scratch space of worker w. f(w, i) may
	// read what no call writes, write only position i's outputs and worker
	// w's scratch, and must not draw from Rand or any other stream: what it
	// needs of them is drawn in order before (so the outcome does not depend
	// on which goroutine ran which call). The simulator
	// sets them (its worker pool is idle while one role works alone, e.g.
	// SAMBA's comp); the daemon leaves them zero, as its roles share the
	// organization's cores with its other sessions. Use ForEach, which runs
	// the calls in order when Parallel is nil.
	Workers  int
	Parallel func(n int, f func(w, i int))
}

// WorkerCount is the number of workers ForEach may use: Workers, at least 1.
func (c *RoleConfig) WorkerCount() int { return max(c.Workers, 1) }

// ForEach calls f(w, i) for every i in [0, n): through Parallel if set,
// otherwise in order, with w = 0. The calls must be independent of each
// other, as Parallel says.
func (c *RoleConfig) ForEach(n int, f func(w, i int)) {
	if c.Parallel != nil && c.Workers > 1 {
		c.Parallel(n, f)
		return
	}
	for i := range n {
		f(0, i)
	}
}

// TickInterval is how much time one Tick stands for, in the daemon and in the
// simulator alike.
const TickInterval = 100 * time.Millisecond
