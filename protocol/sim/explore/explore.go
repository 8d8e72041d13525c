// Package explore runs a family's simulated sessions under random fault
// schedules, deterministically from seeds, and checks invariants after
// each: FoundationDB's simulation testing, TigerBeetle's VOPR, at the size
// of a unit test.
//
// After every schedule it checks that
//   - the session ended: completed, or aborted with a reason; never a panic,
//     a stall, or a run past its virtual-time deadline;
//   - the link model handed every message on exactly once and in order per
//     link (sender, recipient);
//   - a session that aborted had a fault able to abort it (a crash, a
//     tampered body, a link that gave up): the link layer hides every
//     other fault from the roles;
//   - a session that completed, with no tampered body, has the fault-free
//     run's result (Config.Equal);
//   - a restart (sim.Restart) that struck a party before its role
//     finished never lets the session complete — a restarted daemon does
//     not run the session again — and in the session's abort the
//     restarted party records that its daemon restarted, every other
//     party records a reason, and the abort comes no later than the
//     restarted daemon's answer to the next heartbeat, or the peer
//     timeout, whichever is first.
//
// A failing schedule replays exactly (the simulation and the schedule are
// both functions of their seeds) and Shrink reduces it to fewer, milder
// faults that still fail.
package explore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// Config says what to explore.
type Config struct {
	// Registry holds the family; Spec is the session, with its
	// [simulation] table. Small specs: every schedule runs the session.
	Registry *protocol.Registry
	Spec     *protocol.Spec
	// Kinds are the fault kinds drawn; nil: all of them.
	Kinds []sim.FaultKind
	// MaxFaults bounds the faults of one schedule (default 4).
	MaxFaults int
	// Link is the link model; zero fields take sim.DefaultLinkModel's.
	Link sim.LinkModel
	// Equal reports how a completed run's result differs from the
	// fault-free run's, or nil. It must be set: each family says what of
	// its result faults may not change (wall-time costs, say, may differ).
	Equal func(want, got *sim.Result) error
	// OnOutcome, when set, sees how each schedule Explore runs ended.
	OnOutcome func(seed int64, schedule []sim.Fault, out Outcome)
}

// Explorer explores one session's fault schedules.
type Explorer struct {
	cfg  Config
	link sim.LinkModel
	ref  *sim.Result
	// refMessages and refTime are the fault-free run's message count and
	// virtual time: where schedules draw their faults from.
	refMessages int64
	refTime     time.Duration
}

// New runs the session without faults, the reference every schedule is
// checked against.
func New(ctx context.Context, cfg Config) (*Explorer, error) {
	if cfg.Equal == nil {
		return nil, errors.New("explore: Config.Equal is not set")
	}
	if cfg.MaxFaults <= 0 {
		cfg.MaxFaults = 4
	}
	if len(cfg.Kinds) == 0 {
		cfg.Kinds = []sim.FaultKind{sim.Drop, sim.Duplicate, sim.Delay, sim.Reorder, sim.Corrupt, sim.Tamper, sim.Crash, sim.Restart}
	}
	ref, err := sim.Run(ctx, cfg.Registry, cfg.Spec, sim.Options{Workers: 1})
	if err != nil {
		return nil, fmt.Errorf("explore: the fault-free run: %w", err)
	}
	link := cfg.Link
	def := sim.DefaultLinkModel()
	link.ResendAfter = cmpOr(link.ResendAfter, def.ResendAfter)
	link.MaxLosses = cmpOr(link.MaxLosses, def.MaxLosses)
	link.GiveUpAfter = cmpOr(link.GiveUpAfter, def.GiveUpAfter)
	link.PeerTimeout = cmpOr(link.PeerTimeout, def.PeerTimeout)
	link.HeartbeatInterval = cmpOr(link.HeartbeatInterval, def.HeartbeatInterval)
	return &Explorer{cfg: cfg, link: link, ref: ref, refMessages: ref.Messages, refTime: ref.VirtualTime}, nil
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Reference returns the fault-free run.
func (e *Explorer) Reference() *sim.Result { return e.ref }

// Schedule draws the fault schedule of seed: one to MaxFaults faults of the
// configured kinds, on messages the fault-free run sent and at virtual
// times within its length.
func (e *Explorer) Schedule(seed int64) []sim.Fault {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed_fa17))
	n := 1 + r.IntN(e.cfg.MaxFaults)
	parties := e.ref.Assignment.Parties()
	out := make([]sim.Fault, 0, n)
	for range n {
		f := sim.Fault{Kind: e.cfg.Kinds[r.IntN(len(e.cfg.Kinds))], Msg: r.Int64N(max(e.refMessages, 1))}
		// A crash, a restart or a tampered body ends most sessions:
		// drawn a third as often as the faults the link layer hides, so
		// that most schedules test the link model.
		for (f.Kind == sim.Crash || f.Kind == sim.Restart || f.Kind == sim.Tamper) && r.IntN(3) != 0 {
			f.Kind = e.cfg.Kinds[r.IntN(len(e.cfg.Kinds))]
		}
		switch f.Kind {
		case sim.Drop:
			// Mostly a loss or two; now and then enough to give up.
			f.Times = 1 + r.IntN(2)
			if r.IntN(8) == 0 {
				f.Times = e.link.MaxLosses
			}
		case sim.Delay:
			f.Delay = time.Duration(1+r.IntN(3000)) * time.Millisecond
		case sim.Reorder:
			f.Delay = time.Duration(1+r.IntN(500)) * time.Millisecond
		case sim.Tamper:
			f.Byte, f.Mask = r.IntN(1<<16), byte(1+r.IntN(255))
		case sim.Crash, sim.Restart:
			f.Msg = 0
			f.Party = parties[r.IntN(len(parties))]
			f.At = time.Duration(r.Int64N(int64(max(e.refTime, time.Millisecond)))).Truncate(time.Microsecond)
			if f.Kind == sim.Restart {
				// Mostly back within a few heartbeats; now and then
				// down past the peer timeout.
				f.Down = time.Duration(r.IntN(4*int(e.link.HeartbeatInterval/time.Millisecond))) * time.Millisecond
				if r.IntN(4) == 0 {
					f.Down += e.link.PeerTimeout
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// Outcome is how one schedule's session ended.
type Outcome struct {
	Completed bool
	// Reason is an aborted session's error.
	Reason string
	// Result is a completed session's.
	Result *sim.Result
}

// Check runs the session under schedule and returns how it ended, and the
// invariant it broke, if any. A non-nil error with a context's error means
// the exploration was interrupted, not that the schedule failed.
func (e *Explorer) Check(ctx context.Context, schedule []sim.Fault) (out Outcome, problem error) {
	chk := linkChecker{last: map[[2]protocol.Party]uint64{}}
	opts := sim.Options{Workers: 1, Faults: &sim.Faults{Schedule: schedule, Link: e.cfg.Link,
		Deadline: e.deadline(schedule), OnDeliver: chk.deliver}}
	var res *sim.Result
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				problem = fmt.Errorf("panic: %v", r)
			}
		}()
		res, err = sim.Run(ctx, e.cfg.Registry, e.cfg.Spec, opts)
	}()
	switch {
	case problem != nil:
		return out, problem
	case chk.err != nil:
		return out, chk.err
	case err != nil && ctx.Err() != nil:
		return out, ctx.Err()
	case err != nil && (errors.Is(err, sim.ErrDeadline) || strings.Contains(err.Error(), "stalled")):
		return out, fmt.Errorf("hang: %w", err)
	case err != nil:
		out.Reason = err.Error()
		if why := e.mayAbort(schedule); why == "" {
			return out, fmt.Errorf("aborted, though the link layer hides every fault of the schedule from the roles: %w", err)
		}
		var ae *sim.AbortError
		if errors.As(err, &ae) {
			return out, e.checkRestartAbort(schedule, ae)
		}
		return out, nil
	}
	out.Completed, out.Result = true, res
	for _, f := range schedule {
		if fin, ok := res.Finished[f.Party]; f.Kind == sim.Restart && (!ok || fin >= f.At) {
			return out, fmt.Errorf("completed, though %s's daemon restarted at %v, before its role finished (at %v): "+
				"a restarted daemon does not run the session again", f.Party, f.At, fin)
		}
	}
	if hasKind(schedule, sim.Tamper) {
		return out, nil // a tampered body may change what a role computes
	}
	if err := e.cfg.Equal(e.ref, res); err != nil {
		return out, fmt.Errorf("completed with a result other than the fault-free run's: %w", err)
	}
	return out, nil
}

// checkRestartAbort checks the ends of an aborted session against the
// restarts of its schedule: each restart that struck a running role is
// recorded by its party as a restart, and the abort comes no later than
// the restarted daemon's answer to the next heartbeat or the peer timeout.
func (e *Explorer) checkRestartAbort(schedule []sim.Fault, ae *sim.AbortError) error {
	if strings.TrimSpace(ae.Reason) == "" {
		return fmt.Errorf("aborted at %v with no reason", ae.At)
	}
	struck := map[protocol.Party]bool{}
	for i, f := range schedule {
		if f.Kind != sim.Restart || f.At > ae.At {
			continue
		}
		if fin, ok := ae.Finished[f.Party]; ok && fin < f.At {
			continue // its role had finished: not affected
		}
		if stoppedBefore(schedule, i) {
			continue // a crash or an earlier restart stopped its role already
		}
		struck[f.Party] = true
		if end := ae.Ends[f.Party]; !strings.Contains(end, "restarted while the session was open") {
			return fmt.Errorf("%s's daemon restarted at %v, but it recorded the session's end as %q", f.Party, f.At, end)
		}
		// The answer to a heartbeat a round trip after one interval;
		// a second of slack for the links' latency.
		latest := f.At + min(e.link.PeerTimeout, f.Down+e.link.HeartbeatInterval+time.Second)
		if ae.At > latest {
			return fmt.Errorf("%s's daemon restarted at %v (down %v), but the session aborted only at %v, after %v: "+
				"its peers missed its answer to their heartbeat", f.Party, f.At, f.Down, ae.At, latest)
		}
	}
	for p, end := range ae.Ends {
		if !struck[p] {
			return fmt.Errorf("%s recorded %q, though no restart struck it", p, end)
		}
	}
	return nil
}

// stoppedBefore reports whether schedule crashes or restarts the party of
// its restart i before the restart strikes (faults due at the same time
// strike in the schedule's order).
func stoppedBefore(schedule []sim.Fault, i int) bool {
	r := schedule[i]
	for j, f := range schedule {
		if (f.Kind == sim.Crash || f.Kind == sim.Restart) && f.Party == r.Party && (f.At < r.At || f.At == r.At && j < i) {
			return true
		}
	}
	return false
}

// deadline bounds a schedule's virtual time: the fault-free run's, twice,
// plus every delay its faults can add and the time a crash takes to abort.
func (e *Explorer) deadline(schedule []sim.Fault) time.Duration {
	d := 2*e.refTime + e.link.PeerTimeout + e.link.GiveUpAfter
	for _, f := range schedule {
		d += f.Delay + f.Down + time.Duration(f.Times+1)*e.link.ResendAfter
	}
	return d
}

// mayAbort names a fault of schedule that can end a session, or returns "".
func (e *Explorer) mayAbort(schedule []sim.Fault) string {
	losses := map[int64]int{}
	wait := map[int64]time.Duration{}
	for _, f := range schedule {
		switch f.Kind {
		case sim.Crash, sim.Restart, sim.Tamper:
			return f.String()
		case sim.Drop:
			losses[f.Msg] += max(f.Times, 1)
		case sim.Corrupt:
			losses[f.Msg]++
		case sim.Delay, sim.Reorder:
			wait[f.Msg] += f.Delay
		}
	}
	for msg, n := range losses {
		if n >= e.link.MaxLosses || wait[msg]+time.Duration(n)*e.link.ResendAfter > e.link.GiveUpAfter {
			return fmt.Sprintf("message %d lost %d times", msg, n)
		}
	}
	for msg, w := range wait {
		if w > e.link.GiveUpAfter {
			return fmt.Sprintf("message %d delayed %v", msg, w)
		}
	}
	return ""
}

func hasKind(schedule []sim.Fault, k sim.FaultKind) bool {
	for _, f := range schedule {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// linkChecker checks what the link model hands on: per link, the sequence
// numbers 1, 2, 3, … with none twice and none skipped.
type linkChecker struct {
	last map[[2]protocol.Party]uint64
	err  error
}

func (c *linkChecker) deliver(seq uint64, m protocol.Message) {
	k := [2]protocol.Party{m.From, m.To}
	last := c.last[k]
	if c.err == nil && seq != last+1 {
		what := "out of order"
		if seq <= last {
			what = "twice"
		}
		c.err = fmt.Errorf("%s was handed message %d of the link from %s %s (after message %d)", m.To, seq, m.From, what, last)
	}
	c.last[k] = max(last, seq)
}
