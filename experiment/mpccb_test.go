package experiment

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
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

// TestMPCCBPrefix checks what Figure 2's smaller sizes T rely on: a T-step
// session is the first T steps of a longer one (same images, same dealer
// samples), so its average reward is the longer session's curve at T; and
// that the experiment's replay of the dealer's samples is the simulator's
// reference (simulateMPCCB fails otherwise).
func TestMPCCBPrefix(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Fashion-MNIST three times (about 10 s)")
	}
	reg, err := protocol.NewRegistry(mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	fm, err := dataset.FashionMNISTContexts(dataset.FashionMNISTDir)
	if err != nil {
		t.Skipf("no Fashion-MNIST: %v", err)
	}
	contexts, rewards, err := fm.Bandit(dataset.FashionMNIST, 10, 1, 400)
	if err != nil {
		t.Fatal(err)
	}
	job := mpccbJob{Kind: "reward", Dataset: dataset.FashionMNIST, Epsilon: 0.2, Arms: 10, Parties: 2, Run: 1}
	short, long := job, job
	short.Steps, long.Steps = 200, 400
	rs, err := simulateMPCCB(context.Background(), reg, short, 1, contexts, rewards)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := simulateMPCCB(context.Background(), reg, long, 1, contexts, rewards)
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for k, s := range rl.CurveSteps {
		if s == 200 {
			at = k
		}
	}
	if at < 0 {
		t.Fatalf("no checkpoint at step 200 in %v", rl.CurveSteps)
	}
	if rs.AverageReward != rl.Curve[at] || rs.ReferenceAverageReward != rl.ReferenceCurve[at] {
		t.Errorf("200 steps: private %v, reference %v; the 400-step session after 200: %v, %v",
			rs.AverageReward, rs.ReferenceAverageReward, rl.Curve[at], rl.ReferenceCurve[at])
	}
}
