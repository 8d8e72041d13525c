package protocol

// Activated is implemented by roles that act when activated — an agent
// interacting once with its environment — rather than as time passes. The
// simulator of a family with a schedule (Simulator.NewSchedule) activates
// them one global step at a time; the daemon activates one at its Rate. An
// activation of a role that asks its environment (Asker) may end in a
// query, the activation going on when the role is answered.
//
// The pace belongs to the driver, not to the role: the daemon activates a
// role Rate() × TickInterval times a tick (carrying the fractions over from
// tick to tick, and at most MaxActivationsPerTick times), while a
// simulation's Schedule activates it one global step at a time and never
// asks its rate. The role itself never looks at the clock or at whether it
// runs simulated to decide when to act.
type Activated interface {
	Role
	// Activate performs one activation: one global step of the session.
	Activate() error
	// Active reports whether the role can still be activated.
	Active() bool
	// Rate is how many activations per second the role wants in a real
	// session (a BAI agent's interactions per second); 0 or less: none, the
	// role is activated only by a simulation's schedule.
	Rate() float64
}

// Halter is implemented by roles that can be stopped before they finish: the
// simulator halts every unfinished role when its schedule ends (a sample
// budget spent, or nobody left to activate), and each then finishes with a
// result that says it was halted and why.
type Halter interface {
	Halt(reason string) error
}

// Schedule draws the party to activate at each global step of a
// simulation, among those for which active is true, or returns ok false
// and the reason when the schedule ends.
type Schedule func(active func(Party) bool) (p Party, ok bool, reason string)
