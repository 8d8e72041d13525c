package mpccb

import (
	"math"
	"testing"
	"time"
)

// TestMeasureOps checks Table 1's private operations against plaintext
// (measureOps fails on a wrong result) and their rounds for P = 2: a
// fixed-point product is two rounds (the product, the truncation), the
// reciprocal 3 + 2 per iteration, and the argmax of 100 arms
// 7 + ⌈log₂ 99⌉ + 1 (privacy/mpc's ArgMax).
func TestMeasureOps(t *testing.T) {
	ctx := make([][]float64, 1)
	ctx[0] = make([]float64, mpccbDims)
	for i := range ctx[0] {
		ctx[0][i] = 1 / math.Sqrt(mpccbDims)
	}
	ops, err := measureOps(time.Millisecond, ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"addition": 0, "multiplication (fixed point)": 2,
		"reciprocal (3 Newton–Raphson iterations)": 9, "argmax (one-hot, random tie-break)": 15, "matrix–vector W_a⁻¹x, every arm": 2}
	if len(ops) != len(want) {
		t.Fatalf("%d operations, want %d", len(ops), len(want))
	}
	for _, op := range ops {
		w, ok := want[op.Operation]
		if !ok {
			t.Errorf("unexpected operation %q", op.Operation)
			continue
		}
		if op.Rounds != w {
			t.Errorf("%s: %v rounds, want %v", op.Operation, op.Rounds, w)
		}
		if !(op.PlainNs > 0 && op.PrivateNs > 0) {
			t.Errorf("%s: times %v and %v ns", op.Operation, op.PlainNs, op.PrivateNs)
		}
	}
}
