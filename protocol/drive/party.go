package drive

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/bandit-node/bandit-node/protocol"
)

// Batch is what one call into a Party produced, for its shell to carry
// out: send the messages in order (their From is set by the shell's
// transport, from the party it drives), hand the queries to the
// asynchronous environment in order, record the progress and, when Result
// is set, the result (the party is then finished and takes no further
// calls). It has the shape of a role's protocol.Ready, which it is made
// from without a copy, but Queries holds only what an asynchronous
// environment is to answer: an immediate environment's queries were
// answered already. Its slices belong to the shell.
type Batch = protocol.Ready

// Party drives one party's role. It is not safe for concurrent use: its
// shell serializes every call (different parties may be driven at the
// same time). Every call into the family's code — the role, an immediate
// environment — runs under a guard that turns a panic into an *Error.
type Party struct {
	self protocol.Party
	caps Caps
	role protocol.Role
	// The role's optional methods, found once.
	asker    protocol.Asker
	act      protocol.Activated
	halt     protocol.Halter
	recycler Recycler

	env    protocol.Environment // nil: none yet, or the role asks nothing
	envCtx context.Context
	inline bool // env is immediate (protocol.Environment.Immediate): the party answers its queries itself
	asked  int  // queries handed to an asynchronous environment, not yet answered

	owed float64 // an Activated role's activations owed at its rate, fractions carried from tick to tick
	done bool
	err  *Error
}

// New builds party cfg.Self's role of family f, driven as caps says (use
// CapsOf(f); a shell computes it once per session).
func New(f protocol.Family, caps Caps, cfg protocol.RoleConfig) (d *Party, err error) {
	d = &Party{self: cfg.Self, caps: caps}
	defer d.guard(OpBuild, &err)
	r, e := f.NewRole(cfg)
	if e != nil {
		return nil, d.fail(&Error{Op: OpBuild, Err: e})
	}
	if r == nil {
		return nil, d.fail(&Error{Op: OpBuild, Err: errors.New("the family built no role")})
	}
	d.role = r
	d.asker, _ = r.(protocol.Asker)
	d.act, _ = r.(protocol.Activated)
	d.halt, _ = r.(protocol.Halter)
	d.recycler, _ = r.(Recycler)
	return d, nil
}

// Done reports whether the party has finished: a batch carried its result.
func (d *Party) Done() bool { return d.done }

// Asks reports whether the role asks an environment (protocol.Asker): its
// shell then gives it one with UseEnvironment before Start.
func (d *Party) Asks() bool { return d.asker != nil }

// Activated reports whether the role is activated (protocol.Activated) by
// a simulation's schedule.
func (d *Party) Activated() bool { return d.act != nil }

// UseEnvironment gives the party its environment and reports whether it
// is immediate (protocol.Environment.Immediate): the party then answers its queries
// itself, within the call that asked, under ctx. Any other's queries come
// back in Batch.Queries and their outcomes through Answer.
func (d *Party) UseEnvironment(ctx context.Context, env protocol.Environment) (immediate bool) {
	d.env, d.envCtx = env, ctx
	d.inline = env.Immediate()
	return d.inline
}

// SimulatedEnvironment builds family f's own environment for the party a
// role built from cfg plays (protocol.Environmental), whose answers it
// draws from cfg.Rand.
func SimulatedEnvironment(f protocol.Family, cfg protocol.RoleConfig) (protocol.Environment, error) {
	ef, ok := f.(protocol.Environmental)
	if !ok {
		return nil, fmt.Errorf("the role asks an environment, but %s builds none", f.Name())
	}
	env, err := ef.SimulatedEnvironment(cfg)
	if err == nil && env == nil {
		err = errors.New("the family built no environment for a role that asks one")
	}
	return env, err
}

// Start starts the role.
func (d *Party) Start() (b Batch, err error) {
	if d.err != nil {
		return Batch{}, d.err
	}
	defer d.guard(OpStart, &err)
	if e := d.role.Start(); e != nil {
		return Batch{}, d.fail(&Error{Op: OpStart, Err: e})
	}
	err = d.collect(&b)
	return b, err
}

// Step hands the role message m. A finished party drops it.
func (d *Party) Step(m protocol.Message) (b Batch, err error) {
	if d.err != nil || d.done {
		return Batch{}, d.errOrNil()
	}
	defer d.guard(OpStep, &err)
	if e := d.role.Step(m); e != nil {
		return Batch{}, d.fail(&Error{Op: OpStep, From: m.From, Err: e})
	}
	err = d.collect(&b)
	return b, err
}

// Tick advances the role by one tick, as the daemon does every
// protocol.TickInterval: it ticks the role, unless its family is
// message-driven (Caps.Ticks), and activates a protocol.Activated role at
// its Rate — Rate × TickInterval activations, the fractions carried over
// to the next tick, at most protocol.MaxActivationsPerTick — each
// activation's immediate queries answered before the next. A simulation
// that activates parties by schedule (protocol.Simulator.NewSchedule)
// calls Activate instead and never Tick.
func (d *Party) Tick() (b Batch, err error) {
	if d.err != nil || d.done || !d.caps.Ticks {
		return Batch{}, d.errOrNil()
	}
	defer d.guard(OpTick, &err)
	if e := d.role.Tick(); e != nil {
		return Batch{}, d.fail(&Error{Op: OpTick, Err: e})
	}
	if err = d.collect(&b); err != nil || d.act == nil || d.done {
		return b, err
	}
	rate := d.act.Rate()
	if !(rate > 0) {
		return b, nil
	}
	d.owed += rate * protocol.TickInterval.Seconds()
	for n := 0; d.owed >= 1 && n < protocol.MaxActivationsPerTick; n++ {
		d.owed--
		if !d.act.Active() {
			d.owed = 0
			break
		}
		if e := d.act.Activate(); e != nil {
			return Batch{}, d.fail(&Error{Op: OpActivate, Err: e})
		}
		var next Batch
		if err := d.collect(&next); err != nil {
			return Batch{}, err
		}
		merge(&b, next)
		if d.done {
			break
		}
	}
	return b, nil
}

// Active reports whether an Activated role can still be activated; false
// for any other, a finished or a failed party.
func (d *Party) Active() (active bool, err error) {
	if d.err != nil || d.done || d.act == nil {
		return false, d.errOrNil()
	}
	defer d.guard(OpActivate, &err)
	return d.act.Active(), nil
}

// Activate activates an Activated role once: one global step of a
// simulation driven by a protocol.Schedule.
func (d *Party) Activate() (b Batch, err error) {
	if d.err != nil || d.done {
		return Batch{}, d.errOrNil()
	}
	if d.act == nil {
		return Batch{}, d.fail(&Error{Op: OpActivate, Err: errors.New("the role cannot be activated (it is no protocol.Activated)")})
	}
	defer d.guard(OpActivate, &err)
	if e := d.act.Activate(); e != nil {
		return Batch{}, d.fail(&Error{Op: OpActivate, Err: e})
	}
	err = d.collect(&b)
	return b, err
}

// Halt stops an unfinished role that can be halted (protocol.Halter); the
// batch carries its result, which says it was halted and why.
func (d *Party) Halt(reason string) (b Batch, err error) {
	if d.err != nil || d.done {
		return Batch{}, d.errOrNil()
	}
	if d.halt == nil {
		return Batch{}, d.fail(&Error{Op: OpHalt, Err: fmt.Errorf("halted (%s) but the role cannot be halted", reason)})
	}
	defer d.guard(OpHalt, &err)
	if e := d.halt.Halt(reason); e != nil {
		return Batch{}, d.fail(&Error{Op: OpHalt, Err: e})
	}
	if err = d.collect(&b); err == nil && !d.done {
		return Batch{}, d.fail(&Error{Op: OpHalt, Err: fmt.Errorf("halted (%s) but did not finish", reason)})
	}
	return b, err
}

// Answer hands the role the outcome of its oldest query handed to an
// asynchronous environment (Batch.Queries), or the environment's failure
// to answer it (envErr, which fails the party). q is that query.
func (d *Party) Answer(q protocol.Query, o protocol.Outcome, envErr error) (b Batch, err error) {
	if d.err != nil || d.done {
		return Batch{}, d.errOrNil()
	}
	if envErr != nil {
		return Batch{}, d.fail(&Error{Op: OpEnvironment, Query: q.Kind, Step: q.Step, Err: envErr})
	}
	if d.asked == 0 {
		return Batch{}, d.fail(&Error{Op: OpAnswer, Query: q.Kind, Step: q.Step, Err: errors.New("an answer to no query")})
	}
	d.asked--
	defer d.guard(OpAnswer, &err)
	if e := d.asker.Answer(o); e != nil {
		return Batch{}, d.fail(&Error{Op: OpAnswer, Query: q.Kind, Step: q.Step, Err: e})
	}
	err = d.collect(&b)
	return b, err
}

// collect takes the role's Ready batch into *b, answers its queries if
// the environment is immediate (answer), and checks its messages. It is
// on every message's path, so the rare work is in functions of its own.
// The caller holds the guard.
func (d *Party) collect(b *Batch) error {
	*b = d.role.Ready()
	if len(b.Queries) > 0 {
		if err := d.answer(b); err != nil {
			*b = Batch{}
			return err
		}
	}
	for i := range b.Messages {
		if m := &b.Messages[i]; (m.Topic && !d.caps.Topic) || (d.caps.SmallMessages && len(m.Body) > MaxSmallMessage) {
			*b = Batch{}
			return d.badMessage(m)
		}
	}
	if b.Result != nil {
		d.done = true
	}
	return nil
}

// answer has an immediate environment answer the queries of batch b,
// handing the role each outcome and adding what it queues then to b, after
// what it queued before, until the role asks no more; an asynchronous
// environment's queries stay in b.Queries for the shell.
func (d *Party) answer(b *Batch) error {
	qs := b.Queries
	b.Queries = nil
	for len(qs) > 0 {
		if d.env == nil || d.asker == nil {
			return d.fail(&Error{Op: OpEnvironment, Query: qs[0].Kind, Step: qs[0].Step, Err: ErrNoEnvironment})
		}
		if !d.inline {
			b.Queries = qs
			d.asked += len(qs)
			return nil
		}
		for _, q := range qs {
			o, err := d.env.Answer(d.envCtx, q)
			if err != nil {
				return d.fail(&Error{Op: OpEnvironment, Query: q.Kind, Step: q.Step, Err: err})
			}
			if err := d.asker.Answer(o); err != nil {
				return d.fail(&Error{Op: OpAnswer, Query: q.Kind, Step: q.Step, Err: err})
			}
		}
		next := d.role.Ready()
		qs = next.Queries
		next.Queries = nil
		merge(b, next)
	}
	return nil
}

// badMessage is the failure of a role that queued m, a message its family
// may not send.
func (d *Party) badMessage(m *protocol.Message) error {
	if m.Topic && !d.caps.Topic {
		return d.fail(&Error{Op: OpSend, Err: errors.New("published on the session topic, which its family does not use (protocol.Info.UsesTopic)")})
	}
	return d.fail(&Error{Op: OpSend, Err: fmt.Errorf("sent a message of %d bytes; its family declares small messages (at most %d bytes, protocol.Info.SmallMessages)", len(m.Body), MaxSmallMessage)})
}

// merge appends next, a later batch of the same party, to b.
func merge(b *Batch, next Batch) {
	if len(next.Messages) > 0 {
		if len(b.Messages) == 0 {
			b.Messages = next.Messages
		} else {
			// The first batch's slice may be the role's storage: a new one.
			b.Messages = append(slices.Clip(b.Messages), next.Messages...)
		}
	}
	b.Queries = append(b.Queries, next.Queries...)
	if next.Progress != nil {
		b.Progress = next.Progress
	}
	if next.Result != nil {
		b.Result = next.Result
	}
}

// fail records e as the party's failure and returns it.
func (d *Party) fail(e *Error) *Error {
	e.Party = d.self
	if d.err == nil {
		d.err = e
	}
	return d.err
}

// errOrNil returns the party's failure as an error, or a nil error.
func (d *Party) errOrNil() error {
	if d.err != nil {
		return d.err
	}
	return nil
}

// guard is deferred by every call into the family's code: a panic becomes
// the party's failure, op's, with the panic's value and stack.
func (d *Party) guard(op Op, errp *error) {
	if v := recover(); v != nil {
		*errp = d.fail(&Error{Op: op, Panic: v, Stack: debug.Stack()})
	}
}

// Guard calls f, family code that runs for no party (a Combine, a
// result's encoding), turning a panic into an *Error with no Party.
func Guard(op Op, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &Error{Op: op, Panic: v, Stack: debug.Stack()}
		}
	}()
	return f()
}
