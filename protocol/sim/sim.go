package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/drive"
)

// DefaultLinkLatency is the simulator's one-way latency of every link unless the
// spec's [simulation] table sets link_latency.
const DefaultLinkLatency = 100 * time.Microsecond

// maxIdleTicks is how many ticks the simulator lets pass with no message in
// flight and no role finishing before it declares the session stalled.
const maxIdleTicks = 100000

// Options tune a simulation.
type Options struct {
	// Seed, when non-nil, overrides the spec's simulation.seed.
	Seed *int64
	// Logger receives the roles' log lines; nil discards them.
	Logger *slog.Logger
	// Prepared, when set, is called once the family has prepared the
	// simulation (read its data sets) and before any role starts: the CLI
	// collects the preparation's garbage there (bandit-node simulate).
	Prepared func()
	// OnProgress, when set, is called with the summed progress of all roles
	// whenever some role reports progress.
	OnProgress func(protocol.Progress)
	// OnMessage, when set, sees every message sent, once per recipient (a
	// topic message once for every other party), in the order sent. The
	// body is valid only during the call (the simulator may hand it back
	// to its sender once delivered, drive.Recycler): copy what you keep.
	OnMessage func(protocol.Message)
	// SessionID, when set, is the session ID the roles are given (they
	// bind it into what they protect) instead of "sim-SEED": a test that
	// replays a daemons' session in the simulator gives it the daemons'.
	SessionID string
	// Workers is how many goroutines run the roles' handlers: 0 means
	// GOMAXPROCS, 1 the sequential driver. Any number gives the same
	// result, messages in the same order and the same virtual time (see
	// deliverBatch); only the wall time differs.
	Workers int
	// Faults, when set, injects faults into the simulated network (see
	// faults.go and link.go); nil keeps the fault-free fast path.
	Faults *Faults
	// Environments builds the environments of one's own that the spec's
	// [simulation.local.<role>] tables name (ownenv.go); a spec with such
	// a table and no builder is refused. Dir is the spec file's
	// directory, which relative paths in those tables are taken from.
	Environments EnvironmentBuilder
	Dir          string
}

// Result is what a simulation produced.
type Result struct {
	// Protocol is the family simulated.
	Protocol string `json:"protocol"`
	// SessionID is the session's ID its roles saw ("sim-<seed>" unless
	// Options.SessionID set another).
	SessionID string `json:"-"`
	// Seed is the seed every party's randomness was derived from.
	Seed int64 `json:"seed"`
	// Assignment lists the simulated parties.
	Assignment protocol.Assignment `json:"-"`
	// Result is the family's combined result, as the initiator would see it.
	Result any `json:"result"`
	// Local holds each party's private result, keyed by party.
	Local map[string]any `json:"local,omitempty"`
	// Messages and Bytes count what crossed the simulated network.
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// VirtualTime is the simulated duration of the session.
	VirtualTime time.Duration `json:"-"`
	// Finished holds when each role returned its result (virtual time).
	Finished map[protocol.Party]time.Duration `json:"-"`
	// Progress is the sum of the parties' last progress reports, as a
	// daemon's session record would show it at the end.
	Progress protocol.Progress `json:"-"`
	// Steps counts the global steps of a scheduled simulation (protocol.Simulator.NewSchedule).
	Steps int64 `json:"steps,omitempty"`
	// RoleSeconds is the wall time spent inside each role's state machines
	// (all parties of a role together, with the driver's hand-over of their
	// batches between two calls into the same role): the per-role time
	// breakdown.
	RoleSeconds map[string]float64 `json:"role_seconds"`
	// Environments says, by party, what each environment of one's own
	// ([simulation.local.<role>]) did; nil when the family's answered all.
	Environments map[string]EnvironmentUse `json:"environments,omitempty"`
}

// simConfig holds the [simulation] keys the simulator itself reads.
type simConfig struct {
	seed    int64
	latency time.Duration
}

// splitSimulation removes the simulator's own keys from a copy of the table.
func splitSimulation(raw map[string]any) (simConfig, map[string]any, error) {
	cfg := simConfig{seed: 1, latency: DefaultLinkLatency}
	rest := make(map[string]any, len(raw))
	for k, v := range raw {
		rest[k] = v
	}
	if v, ok := rest["seed"]; ok {
		s, ok := v.(int64)
		if !ok {
			return cfg, nil, fmt.Errorf("simulation.seed: want a whole number, got %s", protocol.DescribeValue(v))
		}
		cfg.seed = s
		delete(rest, "seed")
	}
	if v, ok := rest["link_latency"]; ok {
		s, ok := v.(string)
		if !ok {
			return cfg, nil, fmt.Errorf("simulation.link_latency: want a duration such as \"100us\", got %s", protocol.DescribeValue(v))
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return cfg, nil, fmt.Errorf("simulation.link_latency: %q is not a non-negative duration", s)
		}
		cfg.latency = d
		delete(rest, "link_latency")
	}
	return cfg, rest, nil
}

// slotClock is one party's virtual clock: the virtual time of the call the
// driver is making into the party's role (a message's delivery time, a
// tick's time). The driver sets it before each call, so that parties whose
// handlers run at once each read their own time.
type slotClock struct{ s *slot }

func (c slotClock) Now() time.Time { return simEpoch.Add(c.s.now) }

// simEpoch is the virtual time a simulation starts at.
var simEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Run runs every role of a session in this process over a Network, in
// virtual time, deterministically from the seed: the same spec and seed give
// the same result. It drives the very same role code as the daemon.
func Run(ctx context.Context, reg *protocol.Registry, spec *protocol.Spec, opts Options) (*Result, error) {
	f, err := reg.Lookup(spec.Protocol)
	if err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	params, err := f.ParseParams(spec.Params)
	if err != nil {
		return nil, err
	}
	simCfg, rest, err := splitSimulation(spec.Simulation)
	if err != nil {
		return nil, err
	}
	if opts.Seed != nil {
		simCfg.seed = *opts.Seed
	}
	simulator, ok := f.(protocol.Simulator)
	if !ok {
		return nil, fmt.Errorf("protocol %s cannot be simulated (it is no protocol.Simulator)", f.Name())
	}
	own, err := ownTables(rest, opts.Dir)
	if err != nil {
		return nil, protocol.AsKeyError(err)
	}
	if own != nil && opts.Environments == nil {
		return nil, errors.New("simulation.local: this simulator runs the families' own environments only")
	}
	prep, err := simulator.PrepareSimulation(rest, spec.Roles, params)
	if err != nil {
		return nil, err
	}
	if opts.Prepared != nil {
		opts.Prepared()
	}
	assign, locals := prep.Assignment, prep.Local
	if prep.Params != nil {
		params = prep.Params
	}
	if err := checkOwnTables(own, assign); err != nil {
		return nil, protocol.AsKeyError(err)
	}
	if err := protocol.CheckAssignment(f, assign); err != nil {
		return nil, err
	}
	if err := f.CheckAssignment(assign, params, true); err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	parties := assign.Parties()
	net := NewNetwork(parties, simCfg.latency, simEpoch)
	net.observe = opts.OnMessage
	if opts.Faults != nil {
		if err := net.injectFaults(opts.Faults); err != nil {
			return nil, err
		}
	}
	sessionID := fmt.Sprintf("sim-%d", simCfg.seed)
	if opts.SessionID != "" {
		sessionID = opts.SessionID
	}
	d := &simDriver{ctx: ctx, net: net, reports: map[protocol.Party][]byte{}, finished: map[protocol.Party]time.Duration{}, local: map[string]any{},
		onProgress: opts.OnProgress}
	caps := drive.CapsOf(f)
	workers := workerCount(opts.Workers, len(parties))
	if opts.Faults != nil {
		workers = 1 // the parallel driver's batches rest on a first-in, first-out queue (batch.go)
	}
	defer func() {
		for _, s := range d.slots {
			if s.env != nil {
				s.env.Close()
			}
		}
	}()
	asking := map[string]bool{}
	for _, p := range parties {
		s := d.newSlot(p)
		cfg := protocol.RoleConfig{
			Workers: workers,
			Parallel: func(n int, f func(w, i int)) {
				d.parallel(s, n, f)
			},
			SessionID:  sessionID,
			Self:       p,
			Assignment: assign,
			Params:     params,
			Local:      locals[p],
			Rand:       protocol.SeededRand(simCfg.seed, p),
			Clock:      slotClock{s},
			Logger:     logger.With("party", p.String()),
			Simulated:  true,
		}
		party, err := drive.New(f, caps, cfg)
		if err != nil {
			return nil, simError(err)
		}
		s.d = party
		if !party.Asks() {
			continue
		}
		asking[p.Role] = true
		var env protocol.Environment
		if t := own[p.Role]; t != nil && t.answers(p) {
			e, source, err := opts.Environments(ctx, &t.table, EnvironmentFor{SessionID: sessionID, Protocol: f.Name(), Party: p,
				Rand: protocol.SeededEnvironmentRand(simCfg.seed, p)})
			if err != nil {
				return nil, fmt.Errorf("%s's environment: %w", p, protocol.AsKeyError(err))
			}
			s.own = ownEnvironment{drive.NewMeter(e, source)}
			env = s.own
		} else {
			env, err = drive.SimulatedEnvironment(f, protocol.RoleConfig{SessionID: sessionID, Self: p, Assignment: assign,
				Params: params, Local: locals[p], Rand: protocol.SeededEnvironmentRand(simCfg.seed, p),
				Clock: slotClock{s}, Logger: logger.With("party", p.String()), Simulated: true})
			if err != nil {
				return nil, fmt.Errorf("%s's environment: %w", p, err)
			}
		}
		s.env = env
		party.UseEnvironment(ctx, env)
	}
	for _, role := range slices.Sorted(maps.Keys(own)) {
		if !asking[role] {
			return nil, protocol.AsKeyError(fmt.Errorf("%s: role %s asks no environment, so nothing would ask this one", own[role].table.Key, role))
		}
	}

	sched, err := simulator.NewSchedule(rest, params, assign, protocol.SeededRand(simCfg.seed, protocol.Party{Role: "schedule"}))
	if err != nil {
		return nil, err
	}
	d.startWorkers(workers)
	defer d.stopWorkers()
	for _, p := range parties {
		s := d.slots[p]
		if err := d.call(s, s.d.Start); err != nil {
			return nil, simError(err)
		}
	}
	if sched != nil {
		err = d.runSteps(parties, sched)
	} else {
		err = d.run(parties)
	}
	if err != nil {
		return nil, simError(err)
	}
	res, err := f.Combine(assign, params, d.reports)
	if err != nil {
		return nil, fmt.Errorf("combining reports: %w", err)
	}
	roleSeconds := d.roleSeconds()
	uses, ownParties := d.environmentUses(roleSeconds)
	res, err = simulator.Grade(protocol.Grading{Raw: rest, Seed: simCfg.seed, Params: params, Result: res,
		Local: d.local, RoleSeconds: roleSeconds, OwnEnvironments: ownParties})
	if err != nil {
		return nil, fmt.Errorf("grading the result: %w", err)
	}
	msgs, bytes := net.Stats()
	return &Result{
		RoleSeconds:  roleSeconds,
		Environments: uses,
		Steps:        d.steps,
		Progress:     d.progress,
		Protocol:     f.Name(),
		SessionID:    sessionID,
		Seed:         simCfg.seed,
		Assignment:   assign,
		Result:       res,
		Local:        d.local,
		Messages:     msgs,
		Bytes:        bytes,
		VirtualTime:  net.Now().Sub(simEpoch),
		Finished:     d.finished,
	}, nil
}

// simDriver moves messages and ticks between the roles of one simulation.
type simDriver struct {
	ctx        context.Context
	net        *Network
	slots      map[protocol.Party]*slot // per party: one look-up per message
	byNet      []*slot                  // by the party's index on the network (event.to)
	byRole     [][]*slot                // the slots by role (in order of first appearance) and index
	roleNames  []string                 // by role index
	busy       []time.Duration          // wall time inside each role's handlers, by role index
	reports    map[protocol.Party][]byte
	finished   map[protocol.Party]time.Duration // when each role returned its result
	local      map[string]any
	progress   protocol.Progress // the sum over the slots
	onProgress func(protocol.Progress)
	steps      int64
	progressed bool // some role reported progress since the last idle check

	pool *workerPool // nil: the sequential driver
	bt   batch       // the batch being delivered, storage reused
}

// slot is the driver's state of one party.
type slot struct {
	p        protocol.Party
	idx      int                  // p's index on the network (event.from, event.to)
	d        *drive.Party         // the party's driver
	env      protocol.Environment // nil: the role asks nothing
	own      ownEnvironment       // env, when it is one of the organization's own (own.Meter set)
	roleIdx  int                  // index into simDriver.roleNames
	done     bool
	now      time.Duration // virtual time of the call in progress (slotClock)
	progress protocol.Progress

	// Set while a batch is delivered (see batch).
	gen   uint64
	group int

	// loops measures the role's parallel loops with the helpers and
	// without (see simDriver.parallel); only the role's goroutine uses it.
	loops tuner
}

// newSlot adds party p's slot.
func (d *simDriver) newSlot(p protocol.Party) *slot {
	if d.slots == nil {
		d.slots = map[protocol.Party]*slot{}
	}
	r := slices.Index(d.roleNames, p.Role)
	if r < 0 {
		r = len(d.roleNames)
		d.roleNames = append(d.roleNames, p.Role)
		d.byRole = append(d.byRole, nil)
		d.busy = append(d.busy, 0)
	}
	for len(d.byRole[r]) <= p.Index {
		d.byRole[r] = append(d.byRole[r], nil)
	}
	s := &slot{p: p, idx: -1, roleIdx: r}
	d.byRole[r][p.Index] = s
	d.slots[p] = s
	if e := d.net.Endpoint(p); e != nil {
		for len(d.byNet) <= e.idx {
			d.byNet = append(d.byNet, nil)
		}
		d.byNet[e.idx] = s
		s.idx = e.idx
	}
	return s
}

// slotOf returns party p's slot, or nil: a session has a handful of roles,
// so a scan finds p's role faster than a map hashes the party.
func (d *simDriver) slotOf(p protocol.Party) *slot {
	for r, name := range d.roleNames {
		if name == p.Role {
			if p.Index < 0 || p.Index >= len(d.byRole[r]) {
				return nil
			}
			return d.byRole[r][p.Index]
		}
	}
	return nil
}

// roleSeconds sums the busy time by role, also that of the workers.
func (d *simDriver) roleSeconds() map[string]float64 {
	out := make(map[string]float64, len(d.roleNames))
	for r, name := range d.roleNames {
		busy := d.busy[r]
		if d.pool != nil {
			for _, w := range d.pool.busy {
				busy += w[r]
			}
		}
		out[name] = busy.Seconds()
	}
	return out
}

// timed runs f, a call into party s's driver at the network's virtual
// time, and adds its wall time to s's role.
func (d *simDriver) timed(s *slot, f func() (drive.Batch, error)) (drive.Batch, error) {
	s.now = d.net.elapsed()
	start := time.Now()
	b, err := f()
	d.busy[s.roleIdx] += time.Since(start)
	return b, err
}

// deliver feeds m, delivered at virtual time at, to its recipient's role,
// timed, and carries out its batch: the sequential driver.
func (d *simDriver) deliver(m protocol.Message, at time.Duration) error {
	s := d.slotOf(m.To)
	if s == nil || s.done {
		return nil
	}
	s.now = at
	start := time.Now()
	b, err := s.d.Step(m)
	d.busy[s.roleIdx] += time.Since(start)
	if err != nil {
		return err
	}
	return d.flushSlot(s, b, at)
}

// deliverInOrder delivers evs, popped from the network in order, one
// after the other, and carries out each handler's batch before the next:
// the sequential driver. It reads the clock once per run of messages to
// the parties of one role, not twice per message: a role's busy time is
// that of its handlers and of the driver's hand-over between them.
func (d *simDriver) deliverInOrder(evs []event) error {
	role := -1
	var start time.Time
	for i := range evs {
		ev := &evs[i]
		s := d.byNet[ev.to]
		if s == nil || s.done {
			continue
		}
		if s.roleIdx != role {
			now := time.Now()
			if role >= 0 {
				d.busy[role] += now.Sub(start)
			}
			role, start = s.roleIdx, now
		}
		s.now = ev.at
		b, err := s.d.Step(ev.msg)
		if err == nil {
			err = d.flushSlot(s, b, ev.at)
		}
		if err == nil {
			err = d.recycleBody(ev)
		}
		if err != nil {
			d.busy[role] += time.Since(start)
			return err
		}
	}
	if role >= 0 {
		d.busy[role] += time.Since(start)
	}
	return nil
}

// deliverPending delivers every message in flight deliverable by limit
// (every one when bounded is false), in queue order, and those their
// handlers send that are deliverable by then too.
func (d *simDriver) deliverPending(limit time.Duration, bounded bool) error {
	if d.pool != nil {
		for {
			n, err := d.deliverBatch(limit, bounded)
			if n == 0 || err != nil {
				return err
			}
		}
	}
	if d.net.faults == nil {
		// The queue is first in, first out and every handler's messages go
		// to its end (see batch.go), so popping every message deliverable
		// now at once and delivering them in order is popping them one by
		// one: one lock of the network for all of them.
		for {
			d.bt.events = d.net.popUntil(d.bt.events[:0], limit, bounded)
			if len(d.bt.events) == 0 {
				return nil
			}
			err := d.deliverInOrder(d.bt.events)
			clear(d.bt.events) // let the bodies be collected
			if err != nil {
				return err
			}
		}
	}
	// With faults, a handler's message may be due before others in flight:
	// one at a time.
	for {
		at, ok := d.net.NextAt()
		if !ok || (bounded && at.Sub(simEpoch) > limit) {
			return nil
		}
		m, _ := d.net.Next()
		if err := d.deliver(m, d.net.elapsed()); err != nil {
			return err
		}
	}
}

// runSteps drives a family with a schedule (protocol.Simulator.NewSchedule): deliver every message in
// flight, then activate the next party, until every role has finished or
// the schedule ends (then every unfinished role is halted).
func (d *simDriver) runSteps(parties []protocol.Party, sched protocol.Schedule) error {
	var activeErr error
	active := func(p protocol.Party) bool {
		s := d.slots[p]
		if s.done || !s.d.Activated() {
			return false
		}
		ok, err := s.d.Active()
		if err != nil && activeErr == nil {
			activeErr = err
		}
		return ok
	}
	for {
		if err := d.deliverPending(0, false); err != nil {
			return err
		}
		if len(d.reports) == len(parties) {
			return nil
		}
		if d.steps%4096 == 0 {
			if err := d.ctx.Err(); err != nil {
				return fmt.Errorf("simulation interrupted: %w", err)
			}
		}
		if d.net.faults != nil {
			// What is due by the next activation's time strikes before
			// the schedule picks the party to activate.
			next := max(d.net.elapsed(), time.Duration(d.steps+1)*protocol.TickInterval)
			if err := d.faultsDue(next); err != nil {
				return err
			}
		}
		p, ok, reason := sched(active)
		if activeErr != nil {
			return activeErr
		}
		if !ok {
			if err := d.faultsEnded(); err != nil {
				return err
			}
			return d.haltAll(parties, reason)
		}
		d.steps++
		d.net.Advance(simEpoch.Add(time.Duration(d.steps) * protocol.TickInterval))
		s := d.slots[p]
		if err := d.call(s, s.d.Activate); err != nil {
			return fmt.Errorf("activation %d: %w", d.steps, err)
		}
	}
}

// haltAll stops every unfinished role with reason.
func (d *simDriver) haltAll(parties []protocol.Party, reason string) error {
	for _, p := range parties {
		s := d.slots[p]
		if s.done {
			continue
		}
		s.now = d.net.elapsed()
		if err := d.call(s, func() (drive.Batch, error) { return s.d.Halt(reason) }); err != nil {
			return fmt.Errorf("simulation ended (%s): %w", reason, err)
		}
	}
	return nil
}

func (d *simDriver) run(parties []protocol.Party) error {
	nextTick := simEpoch.Add(protocol.TickInterval)
	idle := 0
	for len(d.reports) < len(parties) {
		if err := d.ctx.Err(); err != nil {
			return fmt.Errorf("simulation interrupted: %w", err)
		}
		if at, ok := d.net.NextAt(); ok && !at.After(nextTick) {
			// Every message in flight up to the tick, and those they
			// cause up to it: the tick's roles' calls come after them.
			idle = 0
			if err := d.deliverPending(nextTick.Sub(simEpoch), true); err != nil {
				return err
			}
			continue
		}
		if err := d.faultsDue(nextTick.Sub(simEpoch)); err != nil {
			return err
		}
		d.net.Advance(nextTick)
		nextTick = nextTick.Add(protocol.TickInterval)
		finished := len(d.reports)
		for _, p := range parties {
			s := d.slots[p]
			if s.done {
				continue
			}
			if err := d.call(s, s.d.Tick); err != nil {
				return err
			}
		}
		if d.net.Pending() || len(d.reports) > finished || d.progressed {
			idle = 0
			d.progressed = false
			continue
		}
		if idle++; idle > maxIdleTicks {
			var waiting []string
			for _, p := range parties {
				if !d.slots[p].done {
					waiting = append(waiting, p.String())
				}
			}
			return fmt.Errorf("simulation stalled: no message in flight for %d ticks and %s not finished", maxIdleTicks, strings.Join(waiting, ", "))
		}
	}
	return nil
}

// call makes f, a call into party s's driver, timed at the network's
// virtual time, and carries out its batch, sent then.
func (d *simDriver) call(s *slot, f func() (drive.Batch, error)) error {
	b, err := d.timed(s, f)
	if err != nil {
		return err
	}
	return d.flushSlot(s, b, d.net.elapsed())
}

// flushSlot carries out a batch of a party, whose messages it sent at
// virtual time sent (since the start). The simulator's environments are
// immediate: a batch never holds queries.
func (d *simDriver) flushSlot(s *slot, b drive.Batch, sent time.Duration) error {
	if len(b.Queries) > 0 {
		return fmt.Errorf("%s: its simulated environment did not answer at once (protocol.Environment.Immediate)", s.p)
	}
	if len(b.Messages) > 0 {
		if err := d.ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", s.p, err)
		}
		if i := d.net.sendBatch(s.idx, b.Messages, sent); i >= 0 {
			return d.strayMessage(s, b, i)
		}
	}
	d.record(s, b)
	// The network holds copies of the messages, none of the array.
	return s.d.Recycle(b)
}

// recycleBody hands the body of ev's message, just handled by its
// recipient, back to its sender (drive.Recycler): on the fault-free network
// nothing else holds it — a message is queued once and delivered once, and
// Options.OnMessage sees it only while it is sent — unless it went to the
// topic (one body for every recipient).
func (d *simDriver) recycleBody(ev *event) error {
	if ev.msg.Topic {
		return nil
	}
	if s := d.byNet[ev.from]; s != nil && !s.done {
		return s.d.RecycleBody(ev.msg.Body)
	}
	return nil
}

// strayMessage is the error of a party that sent b.Messages[i] to a party
// not in the session.
func (d *simDriver) strayMessage(s *slot, b drive.Batch, i int) error {
	return fmt.Errorf("%s sent a message to %s, which is not a party of the session", s.p, b.Messages[i].To)
}

// record carries out the rest of a batch whose messages were sent: its
// progress and result.
func (d *simDriver) record(s *slot, b drive.Batch) {
	if b.Progress != nil {
		d.progressed = true
		d.progress.Step += b.Progress.Step - s.progress.Step
		d.progress.Total += b.Progress.Total - s.progress.Total
		d.progress.Activity += b.Progress.Activity - s.progress.Activity
		s.progress = *b.Progress
		if d.onProgress != nil {
			d.onProgress(d.progress)
		}
	}
	if b.Result != nil {
		s.done = true
		d.reports[s.p] = b.Result.Report
		d.finished[s.p] = s.now
		if b.Result.Local != nil {
			d.local[s.p.String()] = b.Result.Local
		}
	}
}

// simError is err as Run returns it: a panic in a role's code comes with
// its stack, for the developer who runs the simulation.
func simError(err error) error {
	var de *drive.Error
	if errors.As(err, &de) && de.Panic != nil {
		return fmt.Errorf("%w\n%s", err, de.Stack)
	}
	return err
}
