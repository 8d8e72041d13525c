package mpccb

import (
	"context"
	"testing"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// TestMPCCBPrefix checks what Figure 2's smaller sizes T rely on: a T-step
// session is the first T steps of a longer one (same images, same dealer
// samples), so its average reward is the longer session's curve at T; and
// that the experiment's replay of the dealer's samples is the simulator's
// reference (simulateMPCCB fails otherwise).
func TestMPCCBPrefix(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("loads Fashion-MNIST three times (about 10 s; minutes under -race): .ci/run runs it without -race")
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
