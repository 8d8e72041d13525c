package protocol

import (
	"context"
	"fmt"
)

// A role that acts on the world — a SAMBA data owner pulling its arm, a BAI
// agent sampling its arms, a P-FCB agent procuring, an mpccb party reading
// its context or rewards — does not do so itself: it asks. It queues a Query
// in its Ready batch; its driver hands the query to the role's Environment
// and, once the environment has answered (a simulated distribution at
// once, the organization's program or service after a round trip), hands
// the role the Outcome through Asker.Answer. Roles stay free of I/O and of
// any knowledge of what answers them; the pace of a role (ticks, rates)
// belongs to the driver, the outcome to the environment.

// QueryKind says what a query asks.
type QueryKind uint8

// The kinds of queries.
const (
	// QueryPull: pull arms Arms at step Step; the outcome holds one
	// reward per arm, in the order of Arms.
	QueryPull QueryKind = iota + 1
	// QueryContext: the context (this party's features) at step Step; the
	// outcome holds X.
	QueryContext
	// QueryRewards: the reward every arm would pay at step Step; the
	// outcome holds one reward per arm, arm 0 first.
	QueryRewards
	// QueryProcure: procure Quantities[i] units from producer
	// Producers[i] at step Step; the outcome holds one realized quality
	// per producer, in the order of Producers.
	QueryProcure
)

var queryKindNames = [...]string{QueryPull: "pull", QueryContext: "context", QueryRewards: "rewards", QueryProcure: "procure"}

// String is the kind's name on the wire of the exec and http environments
// and in logs.
func (k QueryKind) String() string {
	if int(k) < len(queryKindNames) && queryKindNames[k] != "" {
		return queryKindNames[k]
	}
	return fmt.Sprintf("QueryKind(%d)", uint8(k))
}

// Query is what a role asks its environment. Its slices are lent: the
// driver and the environment read them only until the query is answered
// (Asker.Answer is called) and never keep them, so a role may reuse their
// storage for its next query rather than allocate at every step.
type Query struct {
	// ID numbers the role's queries from 1; the outcome carries it back.
	ID uint64
	// Kind says what is asked.
	Kind QueryKind
	// Step is the role's step (SAMBA's t, a BAI agent's interaction, a
	// P-FCB round, mpccb's t), from 0.
	Step int64
	// Arms are the arms to pull (QueryPull).
	Arms []int
	// Producers and Quantities say whom to procure from and how much
	// (QueryProcure).
	Producers  []int
	Quantities []float64
}

// Outcome is an environment's answer to a query.
type Outcome struct {
	// ID is the query's.
	ID uint64
	// Rewards answer QueryPull (one per pulled arm) and QueryRewards (one
	// per arm).
	Rewards []float64
	// X answers QueryContext.
	X []float64
	// Qualities answer QueryProcure, one per producer.
	Qualities []float64
}

// Asker is a role that queries its environment. Its driver answers every
// query of a Ready batch, in order, before it steps the role with anything
// else that arrives later; a query left unanswered (the environment failed)
// ends the session, so a role never waits for an answer that will not come.
type Asker interface {
	Role
	// Answer hands the role the outcome of its oldest unanswered query.
	// An error (an outcome the role cannot use) aborts the session.
	Answer(o Outcome) error
}

// Environmental is implemented by a family some of whose roles are Askers.
type Environmental interface {
	// SimulatedEnvironment builds the family's own environment for party
	// cfg.Self — its simulated distributions, the default source — from the
	// party's local data (cfg.Local), drawing from cfg.Rand, which the
	// driver gives it apart from the role's. It returns nil for a role that
	// asks nothing.
	SimulatedEnvironment(cfg RoleConfig) (Environment, error)
	// EnvironmentShape says, for the admission check of a replayed
	// environment (a file refused before the session starts, not when it
	// runs out), how many columns role's answers have (0: any) and how many
	// steps — rows of a file replayed in order — a session of params may
	// ask for at most (0: unknown).
	EnvironmentShape(role string, params any, a Assignment) (columns int, steps int64)
}

// Environment answers the queries of one role: it is where the world meets
// the role. Its driver calls it from one goroutine at a time, in the order
// the role asked.
type Environment interface {
	// Answer returns q's outcome. It may block (a program, a service) and
	// must return when ctx is done. An error names what failed, for the
	// operator: the session aborts with it.
	Answer(ctx context.Context, q Query) (Outcome, error)
	// Close releases what the environment holds (a program it started).
	Close() error
	// Immediate reports whether the environment answers at once without
	// blocking or failing for reasons of its own (a simulated
	// distribution): a driver may then call it inline, in the goroutine
	// that steps the role. A program or a service is not immediate; its
	// driver answers it on a goroutine of its own.
	Immediate() bool
}
