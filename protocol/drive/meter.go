package drive

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// Meter wraps an environment of the organization's own — a program, a
// service, a replayed file — and counts and times its answers, for its
// operator: how many queries it answered, how long they took, how many it
// was asked and never answered. Both drivers meter those environments, so
// `simulate` and a daemon's session record report them alike. Its counters
// may be read while another goroutine asks.
type Meter struct {
	env    protocol.Environment
	source string
	// asked counts the calls to Answer begun, answered those that
	// returned an outcome; nanos sums their time, maxNanos the longest.
	asked, answered, nanos, maxNanos atomic.Int64
}

// NewMeter meters env, of the given source ("exec", "http", "replay").
func NewMeter(env protocol.Environment, source string) *Meter {
	return &Meter{env: env, source: source}
}

// Answer asks the environment, counting and timing the answer.
func (m *Meter) Answer(ctx context.Context, q protocol.Query) (protocol.Outcome, error) {
	m.asked.Add(1)
	start := time.Now()
	o, err := m.env.Answer(ctx, q)
	d := int64(time.Since(start))
	if err == nil {
		m.answered.Add(1)
	}
	m.nanos.Add(d)
	for {
		old := m.maxNanos.Load()
		if d <= old || m.maxNanos.CompareAndSwap(old, d) {
			break
		}
	}
	return o, err
}

// Start starts the environment if it starts (an exec program says hello
// before its first query).
func (m *Meter) Start(ctx context.Context) error {
	if st, ok := m.env.(interface{ Start(context.Context) error }); ok {
		return st.Start(ctx)
	}
	return nil
}

// Close closes the environment.
func (m *Meter) Close() error { return m.env.Close() }

// Immediate is the environment's.
func (m *Meter) Immediate() bool { return m.env.Immediate() }

// Use returns what the environment did so far. waiting counts the queries
// its party handed over that it was never asked (its driver's queue).
func (m *Meter) Use(waiting int) EnvironmentUse {
	asked, answered := m.asked.Load(), m.answered.Load()
	u := EnvironmentUse{
		Source:     m.source,
		Queries:    answered,
		Unanswered: asked - answered + int64(waiting),
		Seconds:    time.Duration(m.nanos.Load()).Seconds(),
		MaxMillis:  float64(m.maxNanos.Load()) / float64(time.Millisecond),
	}
	if h, ok := m.env.(interface{ Health() (int64, string) }); ok {
		u.Restarts, u.LastError = h.Health()
	}
	return u
}

// EnvironmentUse is what an environment of the organization's own did in
// a session.
type EnvironmentUse struct {
	// Source is the environment's source ("exec", "http", "replay").
	Source string `json:"source"`
	// Queries counts the queries it answered; Unanswered those its role
	// asked that it had not answered when the role ended.
	Queries    int64 `json:"queries"`
	Unanswered int64 `json:"unanswered,omitempty"`
	// Seconds is the time its answers took, MaxMillis the longest.
	Seconds   float64 `json:"seconds"`
	MaxMillis float64 `json:"max_ms"`
	// Warning says, for its operator, how it held its role back: an
	// environment that answered none of its role's queries starved the
	// role (Starved).
	Warning string `json:"warning,omitempty"`
	// Restarts counts an exec program's restarts (after it exited or
	// closed its pipes); LastError is the last line it wrote to its
	// stderr. This organization's own: never sent to a peer.
	Restarts  int64  `json:"restarts,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// Starved reports whether the environment answered none of the queries
// its role asked: the role then took no part in the session (a slow
// program in a racing protocol, where the others finish first).
func (u EnvironmentUse) Starved() bool { return u.Queries == 0 && u.Unanswered > 0 }

// WithWarning returns u with its Warning set when it starved its role,
// for party p.
func (u EnvironmentUse) WithWarning(p protocol.Party) EnvironmentUse {
	if u.Starved() {
		u.Warning = fmt.Sprintf("%s's environment (%s) answered none of the %d queries its role asked before the role ended, so %s took no part: the program or service is too slow for the session's pace, or stuck",
			p, u.Source, u.Unanswered, p)
	}
	return u
}
