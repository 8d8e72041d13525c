package sim

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestParallelLoop checks the simulator's protocol.RoleConfig.Parallel, on the
// parallel path (the timing that may choose the sequential one is set
// aside): every index is run exactly once, by a worker in [0, Workers),
// never by two calls of one worker at once; and, with cores to spare, the
// helpers take part.
func TestParallelLoop(t *testing.T) {
	const workers = 3
	d := &simDriver{slots: map[protocol.Party]*slot{}}
	for i := range workers {
		d.slots[protocol.Party{Role: "r", Index: i}] = &slot{}
	}
	d.startWorkers(workers)
	defer d.stopWorkers()
	if d.pool == nil {
		t.Fatal("no worker pool")
	}
	s := &slot{}
	var helped atomic.Bool
	for round := range 200 {
		for _, n := range []int{0, 1, 2, 7, 100, 1000} {
			hits := make([]atomic.Int32, n)
			var active [workers]atomic.Int32
			s.loops = tuner{n: 2*tuneTrial + 1, parallel: true}
			d.parallel(s, n, func(w, i int) {
				if w < 0 || w >= workers {
					t.Errorf("index %d run by worker %d, want one in [0, %d)", i, w, workers)
					return
				}
				if active[w].Add(1) != 1 {
					t.Errorf("worker %d ran two calls at once", w)
				}
				if w > 0 {
					helped.Store(true)
				}
				if w == 0 && i == 0 && n == 1000 && runtime.GOMAXPROCS(0) > 1 {
					// The caller holds its first index until a helper has
					// taken one of the others: on a loaded machine the
					// caller could otherwise run all 1,000 before a helper
					// is scheduled. The deadline only bounds a broken pool.
					for deadline := time.Now().Add(10 * time.Second); !helped.Load() && time.Now().Before(deadline); {
						time.Sleep(time.Millisecond)
					}
				}
				hits[i].Add(1)
				active[w].Add(-1)
			})
			for i := range hits {
				if got := hits[i].Load(); got != 1 {
					t.Fatalf("round %d, n = %d: index %d run %d times", round, n, i, got)
				}
			}
		}
		if helped.Load() {
			break
		}
	}
	if !helped.Load() && runtime.GOMAXPROCS(0) > 1 {
		t.Error("the helpers never took part in a loop of 1000 indexes whose caller waited 10 s for them")
	}
}

// TestParallelLoopTimed checks that a role's loops are timed both ways and
// the faster kept: with calls that cost nothing, running them in order
// beats handing them out, and after the trials the loops run alone.
func TestParallelLoopTimed(t *testing.T) {
	d := &simDriver{slots: map[protocol.Party]*slot{{Role: "a"}: {}, {Role: "b"}: {}}}
	d.startWorkers(2)
	defer d.stopWorkers()
	// A trial that the machine interrupts can go the other way: three tries.
	var s *slot
	for range 3 {
		s = &slot{}
		for range 2*tuneTrial + 1 {
			d.parallel(s, 64, func(w, i int) {})
		}
		if s.loops.timed != [2]int{tuneTrial, tuneTrial} {
			t.Fatalf("trials timed alone %d, with helpers %d: want %d each", s.loops.timed[0], s.loops.timed[1], tuneTrial)
		}
		if !s.loops.parallel {
			break
		}
	}
	sum := 0
	d.parallel(s, 1000, func(w, i int) {
		if w != 0 {
			t.Errorf("index %d run by worker %d after the trials chose to run alone", i, w)
		}
		sum += i // not atomic: only worker 0 runs
	})
	if s.loops.parallel || sum != 999*1000/2 {
		t.Errorf("parallel %v, sum %d", s.loops.parallel, sum)
	}
}
