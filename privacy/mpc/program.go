package mpc

import "errors"

// Step is one step of a Proc. It returns false when it cannot run yet
// (it waits for a value another Proc computes) or when it has more to do
// after the round; it is then called again in the next round.
type Step func() bool

// Proc is one chain of a computation: steps that each run after the round
// that completed the openings the previous step queued. Several Procs run
// side by side in a Program, and every opening they queue in the same round
// shares that round — which is how independent operations are merged.
type Proc struct {
	e     *Engine
	steps []Step
	pc    int
}

// NewProc returns a Proc of steps on e.
func (e *Engine) NewProc(steps ...Step) *Proc { return &Proc{e: e, steps: steps} }

// Then appends steps.
func (p *Proc) Then(steps ...Step) *Proc {
	p.steps = append(p.steps, steps...)
	return p
}

// advance runs steps until one queues an opening, one must wait, or the
// proc ends. It reports whether it ran any step to completion, whether it
// queued an opening (then it must not run again before the round), and
// whether it ended.
func (p *Proc) advance() (progressed, queued, done bool) {
	for p.pc < len(p.steps) {
		before := len(p.e.opens)
		ok := p.steps[p.pc]()
		if ok {
			p.pc++
			progressed = true
		}
		queued = len(p.e.opens) > before
		if !ok || queued {
			return progressed, queued, false
		}
	}
	return progressed, false, true
}

// Run returns a Step that runs sub to its end: a Proc used inside another.
func Run(sub *Proc) Step {
	return func() bool {
		_, _, done := sub.advance()
		return done
	}
}

// Program runs Procs round by round.
type Program struct {
	e     *Engine
	procs []*Proc
	done  []bool
}

// NewProgram returns an empty Program on e.
func (e *Engine) NewProgram() *Program { return &Program{e: e} }

// Go adds p to the program; it starts in the current round.
func (g *Program) Go(p *Proc) {
	g.procs = append(g.procs, p)
	g.done = append(g.done, false)
}

// ErrStuck is returned by Advance when no Proc can run and none has queued
// anything: a Proc waits for a value no other Proc will compute.
var ErrStuck = errors.New("mpc: the computation is stuck: every chain waits and nothing is being opened")

// Advance runs every Proc as far as it can before the next round. It
// returns true when every Proc has ended; otherwise the caller exchanges
// the engine's Outgoing payload, calls Complete, and calls Advance again.
func (g *Program) Advance() (bool, error) {
	queued := make([]bool, len(g.procs))
	for {
		progressed := false
		all := true
		for i := 0; i < len(g.procs); i++ {
			if i >= len(queued) {
				queued = append(queued, false)
			}
			if g.done[i] || queued[i] {
				all = all && g.done[i]
				continue
			}
			pr, q, done := g.procs[i].advance()
			progressed = progressed || pr || done
			queued[i] = q
			g.done[i] = done
			all = all && done
		}
		if g.e.err != nil {
			return false, g.e.err
		}
		if all {
			if g.e.Pending() {
				return false, errors.New("mpc: a computation ended with openings queued")
			}
			return true, nil
		}
		if !progressed {
			if g.e.Pending() {
				return false, nil
			}
			return false, ErrStuck
		}
	}
}

// Later returns a Step that builds a Proc when it first runs — from values
// earlier steps computed — and then runs it to its end.
func Later(build func() *Proc) Step {
	var p *Proc
	return func() bool {
		if p == nil {
			p = build()
		}
		_, _, done := p.advance()
		return done
	}
}
