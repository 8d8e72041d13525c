package mpccb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func needFashionMNIST(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("the PCA of 60,000 images takes over 30 s under -race; .ci/run runs this test without -race")
	}
	if _, err := os.Stat(filepath.Join(dataset.FashionMNISTDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST is not installed: apt-get install dataset-fashion-mnist")
	}
}

// TestViews runs a simulated session, sequential and in batches of 10, and
// checks, message by message, what each role receives: p′ only shares of
// one-hot vectors, one per step, p″ only shares of a reward its table
// holds, one per step, the dealer only acknowledgements, and a feature
// party openings that look uniform (χ² on the top four bits). A batch
// shows no role more messages than its steps would.
func TestViews(t *testing.T) {
	needFashionMNIST(t)
	reg, err := protocol.NewRegistry(NewFamily()) // one cache: Fashion-MNIST loaded once
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{1, 10} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) { testViews(t, reg, batch) })
	}
}

func testViews(t *testing.T, reg *protocol.Registry, batch int) {
	spec, err := protocol.ParseSpec("views.toml", []byte(fmt.Sprintf(`protocol = "mpccb"
[params]
steps = 40
epsilon = 0.1
batch = %d
[simulation]
parties = 2
seed = 3
`, batch)))
	if err != nil {
		t.Fatal(err)
	}
	var buckets [16]int
	var words int
	toPuller, toReceiver := 0, 0
	opts := sim.Options{OnMessage: func(m protocol.Message) {
		var msg mpccbpb.Message
		if err := proto.Unmarshal(m.Body, &msg); err != nil {
			t.Errorf("undecodable message %s", m)
			return
		}
		switch m.To.Role {
		case RolePuller:
			if _, ok := msg.Kind.(*mpccbpb.Message_Arm); !ok {
				t.Errorf("p′ received %T", msg.Kind)
			}
			toPuller++
		case RoleReceiver:
			if _, ok := msg.Kind.(*mpccbpb.Message_Reward); !ok {
				t.Errorf("p″ received %T", msg.Kind)
			}
			toReceiver++
		case RoleDealer:
			if _, ok := msg.Kind.(*mpccbpb.Message_Ack); !ok {
				t.Errorf("the dealer received %T", msg.Kind)
			}
		case RoleFeature:
			if r, ok := msg.Kind.(*mpccbpb.Message_Round); ok && m.To.Index == 1 {
				for _, w := range r.Round.Arith {
					buckets[w>>60]++
					words++
				}
			}
		}
	}}
	res, err := sim.Run(context.Background(), reg, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if toPuller != 2*40 || toReceiver != 2*40 {
		t.Errorf("p′ received %d messages and p″ %d; want one per feature party and step (80)", toPuller, toReceiver)
	}
	// sim.Run has already checked every opened one-hot (p′ errs otherwise)
	// and every opened reward (p″ errs unless its table holds it).
	if r := res.Result.(*Result); r.ArmAgreement == nil || *r.ArmAgreement < 0.95 || r.Batch != batch {
		t.Errorf("arm agreement %v with the plaintext algorithm in batches of %d (the result's batch: %d)", r.ArmAgreement, batch, r.Batch)
	}
	exp := float64(words) / 16
	var chi float64
	for _, c := range buckets {
		d := float64(c) - exp
		chi += d * d / exp
	}
	if chi > 37.7 { // χ² with 15 degrees of freedom, 0.999 quantile
		t.Errorf("the openings party 1 received are not uniform: χ² = %.1f over %d words", chi, words)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, m := range []*mpccbpb.Message{
		{Kind: &mpccbpb.Message_Round{Round: &mpccbpb.Round{Step: 1, Arith: []uint64{1, 2}, Binary: []uint64{3}}}},
		{Kind: &mpccbpb.Message_DealerSeed{DealerSeed: &mpccbpb.Seed{Seed: make([]byte, 32)}}},
		{Kind: &mpccbpb.Message_Reward{Reward: &mpccbpb.Words{Step: 2, Words: []uint64{5}}}},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, err := decode(protocol.Message{Body: b})
		if err == nil && msg.Kind == nil {
			t.Fatal("decoded a message of no kind")
		}
	})
}
