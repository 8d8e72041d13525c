package sim

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/protocol/drive"
)

// The parallel driver. The Network's queue is first in, first out, and a
// handler's messages go to its end. So the sequential driver, popping the
// messages m1…mn in flight one by one, hands each party its own messages in
// queue order and leaves the queue as it was after mn, followed by m1's
// outputs, m2's, …, mn's. deliverBatch pops m1…mn at once, runs each
// party's handlers for its messages in their order — different parties at
// the same time, on the worker pool — and then queues the outputs in the
// order of m1…mn: the same calls into every role, in the same order per
// role, the same virtual time in each call (the slot's clock), and the
// same queue afterwards. Results, transcripts and virtual time are those of
// the sequential driver.
//
// What this asks of the roles is what protocol.Role already promises: a
// role is called by one goroutine at a time (the pieces it spreads over the
// idle workers itself, protocol.RoleConfig.ForEach, follow that method's
// rules) and holds no state another party's role can reach, and the batch
// Ready returns belongs to the driver (the role keeps neither its slices nor
// the message bodies).

// batch is what deliverBatch works on; its storage is reused.
type batch struct {
	gen    uint64
	events []event
	next   []int     // next[i]: the index of the next event to the same party, or -1
	out    []outcome // by event
	groups []group
	ends   atomic.Uint64 // the groups not yet claimed: [ends>>32, ends&0xffffffff)
	share  int           // a worker claims 1/share of the groups left, at least one
}

// group is one party's messages in a batch: a linked list through
// batch.next, in queue order.
type group struct {
	s           *slot
	first, last int
}

// outcome is what one delivered message produced.
type outcome struct {
	s         *slot // the recipient's
	delivered bool
	err       error
	ready     drive.Batch
}

// workerPool runs the groups of a batch on helper goroutines and on the
// driver's own goroutine. A batch's groups are claimed in chunks from both
// ends: the driver from the front, the helpers from the back, so that a
// party tends to run on the same goroutine batch after batch (its state
// stays in one core's cache) while a helper that starts late, or is
// descheduled, leaves the rest to the driver. A chunk is a share of the
// groups left, so chunks shrink towards the end of a batch and the workers
// finish it at about the same time.
//
// Batches come every few tens of microseconds, about as long as waking a
// parked goroutine takes, so the pool spins for a while (spinFor) before
// parking: a helper waiting for the next batch, the driver waiting for the
// helpers.
type workerPool struct {
	helpers []*helper
	busy    [][]time.Duration // by worker (the driver's is last), by role
	epoch   atomic.Uint64     // counts the batches handed to the helpers
	pending atomic.Int32      // helpers still working on the current batch
	stopped atomic.Bool
	driver  parker // where the driver waits for pending to reach zero
	tune    tuner

	// A role's parallel loop (protocol.RoleConfig.Parallel), which the helpers
	// waiting for a batch join: loops counts the loops posted.
	loop  atomic.Pointer[parallelLoop]
	loops atomic.Uint64
}

// helper is one helper goroutine.
type helper struct {
	seen     uint64 // the last epoch worked on
	loopSeen uint64 // the last parallel loop joined
	park     parker
}

// workerCount is the number of workers of the pool for parties parties
// (0: GOMAXPROCS); with one, the driver stays sequential.
func workerCount(workers, parties int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, parties))
}

// startWorkers starts a pool of workers goroutines, the driver's own
// included (workerCount's answer: the roles were told that number); with one
// the driver stays sequential.
func (d *simDriver) startWorkers(workers int) {
	if workers <= 1 {
		return
	}
	p := &workerPool{busy: make([][]time.Duration, workers), driver: newParker()}
	for w := range p.busy {
		// Each worker's counters on their own cache lines.
		p.busy[w] = make([]time.Duration, len(d.roleNames), max(len(d.roleNames), 16))
	}
	for w := range workers - 1 {
		h := &helper{park: newParker()}
		p.helpers = append(p.helpers, h)
		go func() {
			for {
				h.park.wait(func() bool {
					return p.epoch.Load() != h.seen || p.loops.Load() != h.loopSeen || p.stopped.Load()
				})
				if p.stopped.Load() {
					return
				}
				if n := p.loops.Load(); n != h.loopSeen {
					h.loopSeen = n
					if l := p.loop.Load(); l != nil {
						l.run(w + 1)
					}
				}
				if p.epoch.Load() == h.seen {
					continue
				}
				h.seen = p.epoch.Load()
				d.work(w, false)
				if p.pending.Add(-1) == 0 {
					p.driver.wake()
				}
			}
		}()
	}
	d.pool = p
}

// parallelLoop is one call of protocol.RoleConfig.Parallel: its caller, worker 0,
// and the helpers that join, each helper i as worker i+1, claim chunks of
// its indexes until none is left.
type parallelLoop struct {
	n, chunk int
	f        func(w, i int)
	next     atomic.Int64 // the first index not yet claimed
	done     atomic.Int64 // indexes whose call has returned
	finished parker       // where the caller waits for done to reach n
}

// run claims and runs chunks as worker w.
func (l *parallelLoop) run(w int) {
	for {
		lo := int(l.next.Add(int64(l.chunk))) - l.chunk
		if lo >= l.n {
			return
		}
		hi := min(lo+l.chunk, l.n)
		for i := lo; i < hi; i++ {
			l.f(w, i)
		}
		if l.done.Add(int64(hi-lo)) == int64(l.n) {
			l.finished.wake()
		}
	}
}

// parallel is protocol.RoleConfig.Parallel in a simulation for the role of slot s:
// the role's goroutine runs the loop with whichever helpers are waiting for
// a batch — a role that works alone between two batches (SAMBA's comp) has
// them all. Without a pool the calls run in order. As for batches, the
// helpers can cost more than they save on a loaded machine (a helper
// descheduled in the middle of its share holds up the loop), so each role's
// loops are timed both ways now and then (s.loops) and run the faster way.
// The calls are independent, so the results do not depend on who ran which.
func (d *simDriver) parallel(s *slot, n int, f func(w, i int)) {
	p := d.pool
	parallel := false
	if p != nil && n >= 2 {
		var trial bool
		parallel, trial = s.loops.choose()
		if trial {
			defer s.loops.record(parallel, time.Now(), n)
		}
	}
	if !parallel {
		for i := range n {
			f(0, i)
		}
		return
	}
	l := &parallelLoop{n: n, f: f, chunk: max(1, n/(4*len(p.busy))), finished: newParker()}
	p.loop.Store(l)
	p.loops.Add(1)
	for _, h := range p.helpers {
		h.park.wake()
	}
	l.run(0)
	// A helper may still be in its last chunk; one descheduled there is
	// waited for parked, not spun for.
	l.finished.wait(func() bool { return l.done.Load() >= int64(n) })
	p.loop.CompareAndSwap(l, nil)
}

// stopWorkers ends the pool's goroutines.
func (d *simDriver) stopWorkers() {
	if p := d.pool; p != nil {
		p.stopped.Store(true)
		for _, h := range p.helpers {
			h.park.wake()
		}
	}
}

// Whether the helpers pay off depends on the machine and on the family: on
// cores that other processes keep busy, a helper is descheduled while the
// driver waits for it; and where a party's handler takes less than a
// hand-over to a helper (SAMBA's data owners, a fraction of a microsecond
// each), the pool's bookkeeping and hand-overs cost more than they save. So
// the pool measures: of every tuneEvery batches of several groups, it runs
// tuneTrial as the sequential driver would (deliverInOrder) and tuneTrial
// with the helpers, and the rest the way whose trials took less wall time
// per group (tuner.choose). Either way gives the same results; only the
// wall time differs.
const (
	tuneEvery = 1024
	tuneTrial = 32
)

// tuner is the pool's measurement of the two ways to run a batch (or a
// role's parallel loop). Each way is judged by the median of its trials'
// wall time per group (or per index), not by their sum: a trial now and
// then takes far longer than the others — a collection, the session's
// set-up, the machine's other work — and one such outlier in a round's sum
// would decide the whole round.
type tuner struct {
	n        int                   // batches of several groups so far in this round
	trials   [2][tuneTrial]float64 // this round's trials, ns per group: alone, with helpers
	timed    [2]int                // how many trials of this round each way has recorded
	parallel bool                  // the choice for the rest of the round
}

// choose says whether to run the next batch of several groups with the
// helpers, and whether to time it as a trial.
func (t *tuner) choose() (parallel, trial bool) {
	i := t.n % tuneEvery
	t.n++
	switch {
	case i == 0:
		t.timed = [2]int{}
		return false, true
	case i < tuneTrial:
		return false, true
	case i < 2*tuneTrial:
		return true, true
	case i == 2*tuneTrial:
		// The helpers must save a twentieth: when they only break even, the
		// time they spin waiting for the next batch (spinFor) is CPU
		// taken from the machine, and from the driver's core where the
		// two share one.
		t.parallel = median(t.trials[1][:]) < 0.95*median(t.trials[0][:])
	}
	return t.parallel, false
}

// record adds a trial that ran parallel or not from start until now and did
// units of work (choose's order: the round's first tuneTrial alone, the
// next with the helpers).
func (t *tuner) record(parallel bool, start time.Time, units int) {
	i := (t.n - 1) % tuneEvery
	if parallel {
		i -= tuneTrial
	}
	if i < 0 || i >= tuneTrial || units < 1 {
		return
	}
	t.trials[b2i(parallel)][i] = float64(time.Since(start).Nanoseconds()) / float64(units)
	t.timed[b2i(parallel)]++
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// median returns the median of d, which it sorts.
func median(d []float64) float64 {
	slices.Sort(d)
	return d[len(d)/2]
}

// runBatch runs the batch's groups on the pool, the helpers included, and
// returns when all have run.
func (d *simDriver) runBatch() {
	p, b := d.pool, &d.bt
	helpers := min(len(p.helpers), len(b.groups)-1)
	b.share = 2 * (helpers + 1)
	b.ends.Store(uint64(len(b.groups)))
	if helpers > 0 {
		p.pending.Store(int32(len(p.helpers)))
		p.epoch.Add(1)
		for _, h := range p.helpers {
			h.park.wake()
		}
	}
	d.work(len(p.busy)-1, true)
	if helpers > 0 {
		p.driver.wait(func() bool { return p.pending.Load() == 0 })
	}
}

// parker is where one goroutine waits for a condition another makes true:
// it spins for a while, then parks until woken.
type parker struct {
	sleeping atomic.Bool
	ch       chan struct{}
}

func newParker() parker { return parker{ch: make(chan struct{}, 1)} }

// spinFor is how long a parker checks its condition before parking. It
// outlasts the gaps between a session's parallel batches — SAMBA's comp and
// controller take some tens of microseconds between two batches of data
// owners — so that a helper is awake when the next one comes: waking a
// parked goroutine takes as long as the gap, and a helper that wakes late
// leaves the batch to the driver. A helper waiting through a longer gap
// (ticks, a sequential stretch) parks.
const spinFor = 250 * time.Microsecond

// wait returns once ready reports true. Whoever makes it true calls wake
// afterwards.
func (p *parker) wait(ready func() bool) {
	var start time.Time
	for i := 0; ; i++ {
		if ready() {
			return
		}
		if i%128 == 127 {
			if i == 127 {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				break
			}
			runtime.Gosched()
		}
	}
	for {
		p.sleeping.Store(true)
		if ready() {
			if !p.sleeping.CompareAndSwap(true, false) {
				<-p.ch // wake took the sleeper: take its token
			}
			return
		}
		<-p.ch
		if ready() {
			return
		}
	}
}

// wake wakes the goroutine if it parked.
func (p *parker) wake() {
	if p.sleeping.Load() && p.sleeping.CompareAndSwap(true, false) {
		p.ch <- struct{}{}
	}
}

// deliverBatch delivers every message in flight deliverable by limit (every
// one when bounded is false), as the sequential driver would, and returns
// how many it popped: a batch of several parties' messages on the pool, or,
// when the pool's measurement says that is quicker (tuner) or there is one
// party, as the sequential driver does (deliverInOrder) — the same calls in
// the same order, the same queue afterwards, without the pool's hand-overs.
// A trial of the two ways is timed from the choice to the batch's outputs
// queued.
func (d *simDriver) deliverBatch(limit time.Duration, bounded bool) (n int, err error) {
	b := &d.bt
	b.events = d.net.popUntil(b.events[:0], limit, bounded)
	n = len(b.events)
	if n == 0 {
		return 0, nil
	}
	b.gen++
	b.next = grow(b.next, n)
	b.out = grow(b.out, n)
	b.groups = b.groups[:0]
	for i := range b.events {
		b.next[i], b.out[i] = -1, outcome{}
		s := d.byNet[b.events[i].to]
		if s == nil {
			continue
		}
		if s.gen != b.gen {
			s.gen, s.group = b.gen, len(b.groups)
			b.groups = append(b.groups, group{s: s, first: i, last: i})
			continue
		}
		g := &b.groups[s.group]
		b.next[g.last], g.last = i, i
	}
	parallel, trial := false, false
	if len(b.groups) > 1 {
		parallel, trial = d.pool.tune.choose()
	}
	if trial {
		start := time.Now()
		defer func() { d.pool.tune.record(parallel, start, len(b.groups)) }()
	}
	if !parallel {
		err = d.deliverInOrder(b.events)
		clear(b.events) // let the bodies be collected
		return n, err
	}
	d.runBatch()

	// The outputs, in the order of the messages that caused them: first
	// every message, under one lock of the network, up to the first
	// handler that failed or sent a message astray; then their progress
	// and results.
	if err := d.ctx.Err(); err != nil {
		return n, fmt.Errorf("simulation interrupted: %w", err)
	}
	stop, stray := n, -1
	d.net.mu.Lock()
	for i := range b.events {
		o := &b.out[i]
		if !o.delivered {
			continue
		}
		if o.err != nil {
			stop = i
			break
		}
		if ms := o.ready.Messages; len(ms) > 0 {
			if stray = d.net.sendBatchLocked(o.s.idx, ms, b.events[i].at); stray >= 0 {
				stop = i
				break
			}
		}
	}
	d.net.mu.Unlock()
	for i := range stop {
		if o := &b.out[i]; o.delivered {
			d.record(o.s, o.ready)
			// The network holds copies of the messages, none of the
			// array, and the handler is done with the body it handled.
			if err == nil {
				err = o.s.d.Recycle(o.ready)
			}
			if err == nil && d.net.faults == nil {
				err = d.recycleBody(&b.events[i])
			}
		}
	}
	if err == nil && stop < n {
		o := &b.out[stop]
		if err = o.err; err == nil {
			err = d.strayMessage(o.s, o.ready, stray)
		}
	}
	clear(b.out[:n]) // let the Ready batches be collected
	clear(b.events)  // and the bodies
	return n, err
}

// work claims chunks of the batch's groups, from the front or the back,
// until none is left, timing the handlers by role on worker w's counters:
// one reading of the clock per chunk and per change of role within it.
func (d *simDriver) work(w int, front bool) {
	b := &d.bt
	busy := d.pool.busy[w]
	for {
		first, end, ok := b.claim(front)
		if !ok {
			return
		}
		role := b.groups[first].s.roleIdx
		start := time.Now()
		for g := first; g < end; g++ {
			if r := b.groups[g].s.roleIdx; r != role {
				now := time.Now()
				busy[role] += now.Sub(start)
				role, start = r, now
			}
			d.runGroup(&b.groups[g])
		}
		busy[role] += time.Since(start)
	}
}

// claim takes the next chunk of groups [first, end) from the front or the
// back of those not yet claimed: 1/share of them, at least one.
func (b *batch) claim(front bool) (first, end int, ok bool) {
	for {
		e := b.ends.Load()
		lo, hi := int(e>>32), int(e&0xffffffff)
		if lo >= hi {
			return 0, 0, false
		}
		n := max(1, (hi-lo)/b.share)
		if front {
			first, end = lo, lo+n
			if b.ends.CompareAndSwap(e, uint64(end)<<32|uint64(hi)) {
				return first, end, true
			}
		} else {
			first, end = hi-n, hi
			if b.ends.CompareAndSwap(e, uint64(lo)<<32|uint64(first)) {
				return first, end, true
			}
		}
	}
}

// runGroup hands one party its messages of the batch, in order, keeping
// each handler's Ready batch for the driver. A party that finishes gets no
// more; one that rejects a message, nothing after it (the driver then
// stops).
func (d *simDriver) runGroup(g *group) {
	b := &d.bt
	s := g.s
	for i := g.first; i >= 0; i = b.next[i] {
		if s.done {
			continue
		}
		ev := &b.events[i]
		s.now = ev.at
		rd, err := s.d.Step(ev.msg)
		if err == nil && len(rd.Queries) > 0 {
			err = fmt.Errorf("%s: its simulated environment did not answer at once (protocol.Environment.Immediate)", s.p)
		}
		if err != nil {
			b.out[i] = outcome{s: s, delivered: true, err: err}
			return
		}
		b.out[i] = outcome{s: s, delivered: true, ready: rd}
		if rd.Result != nil {
			s.done = true
		}
	}
}

// grow returns s with length n, reusing its storage when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, 2*n)
}
