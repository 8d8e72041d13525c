package protocol

import "io"

// Simulator is what a family needs only in a simulation (bandit-node
// simulate, package protocol/sim): local data drawn from the spec's
// [simulation] table, the schedule of a family whose simulation advances
// in global steps, and the grading of a result against a ground truth no
// participant of a real session knows. Every family the simulator runs
// implements it.
type Simulator interface {
	// PrepareSimulation decodes the family's keys of the spec's
	// [simulation] table (the simulator has removed its own: seed,
	// link_latency, local) and returns the session's assignment — roles
	// when given, or one derived from the table — every party's local data
	// and, where the spec leaves a parameter to the simulated data, the
	// params completed (Prepared). params is what ParseParams returned: the
	// local data may depend on it (how many steps of a data set, how many
	// arms).
	PrepareSimulation(raw map[string]any, roles Assignment, params any) (Prepared, error)
	// NewSchedule returns the schedule of a family whose simulation
	// advances in global steps (the multi-agent bandits' "one active agent
	// per round"), built from the table, the params and a seeded source of
	// randomness: at each step one party it draws is activated
	// (Activated), and every message it causes is delivered before the
	// next step; each step advances the virtual clock by one TickInterval,
	// so a role can tell the global step from its Clock. A nil Schedule:
	// the simulation advances in ticks, as a daemon does.
	NewSchedule(raw map[string]any, params any, a Assignment, rand io.Reader) (Schedule, error)
	// Grade returns the simulation's result: the combined result, graded
	// where the family can (see Grading), or as it is.
	Grade(g Grading) (any, error)
}

// Prepared is a simulation as Simulator.PrepareSimulation prepared it.
type Prepared struct {
	// Assignment is the session's: the spec's roles, or derived from the
	// [simulation] table.
	Assignment Assignment
	// Local holds every party's local data, by party.
	Local map[Party]any
	// Params, when not nil, are the session's params completed from the
	// simulated data, in place of ParseParams's (mpccb: the number of arms
	// of a table whose spec leaves params.arms out is its classes'). Of
	// the family's params type, as ParseParams returns them.
	Params any
}

// Grading is what the simulator hands Simulator.Grade once a simulation
// has ended.
type Grading struct {
	// Raw is the [simulation] table without the simulator's own keys: the
	// ground truth (the true means, say).
	Raw map[string]any
	// Seed is the seed of the simulation, for a plain reference run from
	// the same seed.
	Seed int64
	// Params are what ParseParams returned.
	Params any
	// Result is what Combine returned.
	Result any
	// Local holds every party's private result, keyed by party (a
	// simulation has them all; a real session never does).
	Local map[string]any
	// RoleSeconds is the wall time spent inside each role's state machines,
	// summed over the role's parties, for a result that reports its speed.
	RoleSeconds map[string]float64
	// OwnEnvironments lists the parties ("data_owner[2]") whose queries an
	// environment of the organization's own answered (a program, a
	// service, a replayed file: [simulation.local.<role>]) instead of the
	// family's simulated one. Raw's ground truth is then not theirs: a
	// Grade compares nothing with a reference drawn from it.
	OwnEnvironments []string
}
