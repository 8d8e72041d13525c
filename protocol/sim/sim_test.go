package sim_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func registry(t *testing.T, fams ...protocol.Family) *protocol.Registry {
	t.Helper()
	reg, err := protocol.NewRegistry(fams...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func mustSpec(t *testing.T, text string) *protocol.Spec {
	t.Helper()
	s, err := protocol.ParseSpec("spec.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSimulatePingLatencyIsTwiceTheLink(t *testing.T) {
	spec := mustSpec(t, `
protocol = "ping"
[roles]
participant = ["a", "b", "c"]
[params]
count = 20
[simulation]
seed = 7
link_latency = "250us"
`)
	res, err := sim.Run(context.Background(), registry(t, ping.Family{}), spec, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Result.(ping.Matrix)
	for i := range 3 {
		for j := range 3 {
			want := 500.0
			if i == j {
				want = 0
			}
			if m.MedianMicros[i][j] != want || m.P99Micros[i][j] != want {
				t.Errorf("rtt[%d][%d] = %v/%v µs, want %v", i, j, m.MedianMicros[i][j], m.P99Micros[i][j], want)
			}
		}
	}
	// 3 participants, 2 peers each, count pings and count pongs per link.
	if want := int64(3 * 2 * 20 * 2); res.Messages != want {
		t.Errorf("messages = %d, want %d", res.Messages, want)
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	spec := mustSpec(t, "protocol = \"ping\"\n[params]\ncount = 5\n[simulation]\nparticipants = 4\n")
	reg := registry(t, ping.Family{})
	a, err := sim.Run(context.Background(), reg, spec, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.Run(context.Background(), reg, spec, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Result, b.Result) || a.Messages != b.Messages || a.VirtualTime != b.VirtualTime {
		t.Errorf("two runs of the same spec differ: %+v vs %+v", a, b)
	}
}

// stuckFamily's roles never finish and never send: the simulator must say so.
type stuckFamily struct{ ping.Family }

func (stuckFamily) Name() string { return "stuck" }
func (stuckFamily) NewRole(protocol.RoleConfig) (protocol.Role, error) {
	return stuckRole{}, nil
}

type stuckRole struct{}

func (stuckRole) Start() error                { return nil }
func (stuckRole) Step(protocol.Message) error { return nil }
func (stuckRole) Tick() error                 { return nil }
func (stuckRole) Ready() protocol.Ready       { return protocol.Ready{} }

func TestSimulateReportsStall(t *testing.T) {
	spec := mustSpec(t, "protocol = \"stuck\"\n[simulation]\nparticipants = 2\n")
	_, err := sim.Run(context.Background(), registry(t, stuckFamily{}), spec, sim.Options{})
	if err == nil || !strings.Contains(err.Error(), "stalled") || !strings.Contains(err.Error(), "participant[1]") {
		t.Fatalf("err = %v, want a stall naming participant[1]", err)
	}
}

func TestSimulateHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	spec := mustSpec(t, "protocol = \"stuck\"\n[simulation]\nparticipants = 2\n")
	_, err := sim.Run(ctx, registry(t, stuckFamily{}), spec, sim.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
