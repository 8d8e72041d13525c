package protocol

import "io"

// Activated is implemented by roles that act when activated — an agent
// interacting once with its environment — rather than as time passes. The
// simulator of a StepScheduler family activates them one global step at a
// time; the daemon activates a Paced one at its rate. An activation of a role
// that asks its environment (Asker) may end in a query, the activation going
// on when the role is answered.
type Activated interface {
	Role
	// Activate performs one activation: one global step of the session.
	Activate() error
	// Active reports whether the role can still be activated.
	Active() bool
}

// Halter is implemented by roles that can be stopped before they finish: the
// simulator halts every unfinished role when its schedule ends (a sample
// budget spent, or nobody left to activate), and each then finishes with a
// result that says it was halted and why.
type Halter interface {
	Halt(reason string) error
}

// Schedule draws the party to activate at each global step of a simulation.
type Schedule interface {
	// Next returns the party to activate among those for which active is
	// true, or ok false and the reason when the schedule ends.
	Next(active func(Party) bool) (p Party, ok bool, reason string)
}

// StepScheduler is implemented by families whose simulation advances in
// global steps (the multi-agent bandits' "one active agent per round"): at
// each step one party drawn by the schedule is activated, and every message
// it causes is delivered before the next step. Each step advances the
// virtual clock by one TickInterval, so a role can tell the global step from
// its Clock.
type StepScheduler interface {
	// NewSchedule builds the schedule of a simulation from the spec's
	// [simulation] table (without the simulator's own keys), the parsed
	// params and a seeded source of randomness.
	NewSchedule(raw map[string]any, params any, a Assignment, rand io.Reader) (Schedule, error)
}
