package protocol

import "testing"

// TestForEachWithoutParallel checks that ForEach without Parallel runs the
// calls in order, as worker 0.
func TestForEachWithoutParallel(t *testing.T) {
	for _, cfg := range []RoleConfig{{}, {Workers: 4}, {Workers: 1, Parallel: func(int, func(int, int)) { t.Error("Parallel called with one worker") }}} {
		var got []int
		cfg.ForEach(5, func(w, i int) {
			if w != 0 {
				t.Errorf("worker %d, want 0", w)
			}
			got = append(got, i)
		})
		if len(got) != 5 {
			t.Fatalf("%d calls, want 5", len(got))
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("calls in order %v, want 0 … 4", got)
			}
		}
		if cfg.WorkerCount() < 1 {
			t.Errorf("WorkerCount %d", cfg.WorkerCount())
		}
	}
}
