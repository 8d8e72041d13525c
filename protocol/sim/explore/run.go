package explore

import (
	"context"
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/protocol/sim"
)

// Stats counts how the schedules of an exploration ended.
type Stats struct {
	Schedules int // run
	Completed int
	Aborted   int
	Faults    int // injected, over all schedules
}

func (s Stats) String() string {
	return fmt.Sprintf("%d schedules (%d faults): %d completed, %d aborted with a reason", s.Schedules, s.Faults, s.Completed, s.Aborted)
}

// Failure is a schedule that broke an invariant.
type Failure struct {
	// Seed drew Schedule (see Explorer.Schedule).
	Seed     int64
	Schedule []sim.Fault
	Problem  error
	// Shrunk is a smallest schedule found that still fails, and its
	// problem.
	Shrunk        []sim.Fault
	ShrunkProblem error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("schedule seed %d (%s) failed: %v\nshrunk to %d fault(s): %s\n  %v",
		f.Seed, sim.FormatSchedule(f.Schedule), f.Problem, len(f.Shrunk), sim.FormatSchedule(f.Shrunk), f.ShrunkProblem)
}

// Explore checks the schedules of seeds first, first+1, … first+n-1 in
// turn and stops at the first that fails, which it shrinks. It returns
// when n schedules have run, one failed, or ctx ends (with ctx's error).
func (e *Explorer) Explore(ctx context.Context, first int64, n int) (Stats, error) {
	var st Stats
	for i := range n {
		seed := first + int64(i)
		schedule := e.Schedule(seed)
		out, problem := e.Check(ctx, schedule)
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("exploration interrupted after %d schedules: %w", st.Schedules, err)
		}
		st.Schedules++
		st.Faults += len(schedule)
		if e.cfg.OnOutcome != nil {
			e.cfg.OnOutcome(seed, schedule, out)
		}
		if problem != nil {
			f := &Failure{Seed: seed, Schedule: schedule, Problem: problem}
			f.Shrunk, f.ShrunkProblem = e.Shrink(ctx, schedule, problem)
			return st, f
		}
		if out.Completed {
			st.Completed++
		} else {
			st.Aborted++
		}
	}
	return st, nil
}

// maxShrinkRuns bounds the sessions Shrink runs.
const maxShrinkRuns = 400

// Shrink reduces a failing schedule: it drops faults one at a time, then
// makes those left milder (fewer losses, shorter delays, a byte flipped
// earlier), keeping each change after which the schedule still fails, until
// none helps. It returns the smallest schedule found and its problem.
func (e *Explorer) Shrink(ctx context.Context, schedule []sim.Fault, problem error) ([]sim.Fault, error) {
	cur := append([]sim.Fault(nil), schedule...)
	runs := 0
	fails := func(s []sim.Fault) (error, bool) {
		if runs >= maxShrinkRuns || ctx.Err() != nil {
			return nil, false
		}
		runs++
		_, p := e.Check(ctx, s)
		return p, p != nil && ctx.Err() == nil
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur); i++ {
			cand := append(append([]sim.Fault(nil), cur[:i]...), cur[i+1:]...)
			if p, ok := fails(cand); ok {
				cur, problem, changed = cand, p, true
				i--
			}
		}
		for i := range cur {
			for _, milder := range milder(cur[i]) {
				cand := append([]sim.Fault(nil), cur...)
				cand[i] = milder
				if p, ok := fails(cand); ok {
					cur, problem, changed = cand, p, true
					break
				}
			}
		}
	}
	return cur, problem
}

// milder returns milder versions of f, mildest first.
func milder(f sim.Fault) []sim.Fault {
	var out []sim.Fault
	switch f.Kind {
	case sim.Drop:
		for t := 1; t < f.Times; t++ {
			g := f
			g.Times = t
			out = append(out, g)
		}
	case sim.Delay, sim.Reorder:
		for _, d := range []time.Duration{time.Millisecond, f.Delay / 4, f.Delay / 2} {
			if d > 0 && d < f.Delay {
				g := f
				g.Delay = d
				out = append(out, g)
			}
		}
	case sim.Tamper:
		if f.Byte > 0 {
			g := f
			g.Byte = 0
			out = append(out, g)
		}
	case sim.Crash:
		if f.At > 0 {
			g := f
			g.At = f.At / 2
			out = append(out, g)
		}
	case sim.Restart:
		if f.Down > 0 {
			g := f
			g.Down = f.Down / 2
			out = append(out, g)
		}
		if f.At > 0 {
			g := f
			g.At = f.At / 2
			out = append(out, g)
		}
	}
	return out
}
