package protocol

// Paced is implemented by an Activated role whose pace, in a real session,
// is a rate: a BAI agent interacts with its environment so many times a
// second. The pace belongs to the driver, not to the role: the daemon
// activates a Paced role Rate() × TickInterval times a tick (carrying the
// fractions over from tick to tick, and at most MaxActivationsPerTick
// times), while a simulator's Schedule activates it one global step at a
// time and never asks its rate. The role itself never looks at the clock or
// at whether it runs simulated to decide when to act.
type Paced interface {
	Activated
	// Rate is how many activations per second the role wants; 0 or less:
	// none.
	Rate() float64
}

// MaxActivationsPerTick bounds the activations of one Paced role in one
// tick of the daemon, so that a tick's work stays bounded whatever rate a
// configuration names.
const MaxActivationsPerTick = 100000
