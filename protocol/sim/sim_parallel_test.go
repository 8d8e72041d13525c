package sim_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// TestParallelDriverMatchesSequential runs a small session of every family
// with the sequential driver and with the parallel one (more workers than
// parties of a batch, to mix the order in which handlers run): the same
// messages in the same order, the same results, the same virtual time.
func TestParallelDriverMatchesSequential(t *testing.T) {
	reg := registry(t, ping.Family{}, samba.Family{}, bai.Family{}, pfcb.Family{}, mpccb.NewFamily())
	specs := map[string]string{
		"ping": "protocol = \"ping\"\n[params]\ncount = 20\n[simulation]\nparticipants = 5\nseed = 3\n",
		"samba": `protocol = "samba"
[params]
algorithm = "pursuit"
budget = 300
paillier_bits = 512
[simulation]
arms = [0.6, 0.5, 0.45, 0.3, 0.2, 0.1]
seed = 2
`,
		"samba-thompson": `protocol = "samba"
[params]
algorithm = "thompson"
budget = 300
paillier_bits = 512
[simulation]
arms = [0.6, 0.5, 0.45, 0.3, 0.2]
seed = 5
`,
		"bai": `protocol = "bai"
[params]
algorithm = "dp_mase"
delta = 0.05
epsilon = 1
beta = 0.5
[simulation]
agents = 16
arms = [0.9, 0.5, 0.3, 0.1]
seed = 4
`,
		"bai-ce": `protocol = "bai"
[params]
algorithm = "corrupted_elimination"
delta = 0.05
eta = 0.9
xi = 0.05
[simulation]
agents = 40
arms = [0.9, 0.5, 0.3, 0.1]
seed = 4
`,
		"pfcb": `protocol = "pfcb"
[params]
algorithm = "pfcb"
rounds = 2000
[simulation]
agents = 5
producers = 8
seed = 6
`,
		"mpccb": `protocol = "mpccb"
[params]
steps = 25
arms = 4
[simulation]
parties = 3
dataset = "synthetic"
seed = 7
`,
	}
	for name, text := range specs {
		t.Run(name, func(t *testing.T) {
			if name == "mpccb" {
				needFashionMNIST(t)
			}
			spec := mustSpec(t, text)
			seq, seqLog := simulateWith(t, reg, spec, 1)
			par, parLog := simulateWith(t, reg, spec, 4)
			if seqLog.n == 0 || seqLog.n != parLog.n || seqLog.sum != parLog.sum {
				t.Errorf("transcripts differ: %d messages (%x) sequentially, %d (%x) in parallel", seqLog.n, seqLog.sum, parLog.n, parLog.sum)
			}
			if seq.Messages != par.Messages || seq.Bytes != par.Bytes || seq.VirtualTime != par.VirtualTime || seq.Steps != par.Steps {
				t.Errorf("sequential %d messages, %d bytes, %v, %d steps; parallel %d, %d, %v, %d",
					seq.Messages, seq.Bytes, seq.VirtualTime, seq.Steps, par.Messages, par.Bytes, par.VirtualTime, par.Steps)
			}
			if a, b := untimed(t, seq.Result), untimed(t, par.Result); !reflect.DeepEqual(a, b) {
				t.Errorf("results differ:\n%v\n%v", a, b)
			}
			if a, b := untimed(t, seq.Local), untimed(t, par.Local); !reflect.DeepEqual(a, b) {
				t.Errorf("local results differ:\n%v\n%v", a, b)
			}
			if len(seq.RoleSeconds) != len(par.RoleSeconds) {
				t.Errorf("role seconds for %v sequentially, %v in parallel", seq.RoleSeconds, par.RoleSeconds)
			}
		})
	}
}

// needFashionMNIST skips a test of the mpccb family (whose synthetic data
// set is built from Fashion-MNIST) when the data set is missing or the PCA
// would take too long.
func needFashionMNIST(t *testing.T) {
	t.Helper()
	if raceEnabled || testing.Short() {
		t.Skip("the PCA of 60,000 images takes over 30 s under -race and about 15 s without")
	}
	if _, err := os.Stat(filepath.Join(dataset.FashionMNISTDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST is not installed: apt-get install dataset-fashion-mnist")
	}
}

// transcript hashes every message sent, in order.
type transcript struct {
	n   int
	sum [32]byte
}

func simulateWith(t *testing.T, reg *protocol.Registry, spec *protocol.Spec, workers int) (*sim.Result, transcript) {
	t.Helper()
	var tr transcript
	h := sha256.New()
	res, err := sim.Run(context.Background(), reg, spec, sim.Options{Workers: workers, OnMessage: func(m protocol.Message) {
		tr.n++
		h.Write([]byte(m.From.String() + ">" + m.To.String()))
		if m.Topic {
			h.Write([]byte{1})
		}
		h.Write(m.Body)
	}})
	if err != nil {
		t.Fatalf("%d workers: %v", workers, err)
	}
	copy(tr.sum[:], h.Sum(nil))
	return res, tr
}

// untimed is v as JSON, without the wall-clock measurements (keys naming
// seconds, busy time or milliseconds per step), which differ from run to run.
func untimed(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if strings.Contains(k, "seconds") || strings.Contains(k, "busy") || strings.Contains(k, "ms_per") || strings.HasSuffix(k, "_ns") {
					delete(v, k)
					continue
				}
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(out)
	return out
}
