package explore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/bandit-node/bandit-node/protocol/sim"
	"github.com/bandit-node/bandit-node/protocol/sim/explore"
)

// The environment variables that tune TestExploreFamilies by hand:
//
//	BANDIT_EXPLORE_SCHEDULES=1000000  schedules per family (default: each family's schedules)
//	BANDIT_EXPLORE_SEED=12345         the first schedule's seed (default 1)
//	BANDIT_EXPLORE_REPLAY=<schedule>  run this one schedule (as a failure prints it)
//	                                  with -run 'TestExploreFamilies/<family>'
const (
	envSchedules = "BANDIT_EXPLORE_SCHEDULES"
	envSeed      = "BANDIT_EXPLORE_SEED"
	envReplay    = "BANDIT_EXPLORE_REPLAY"
)

// raceDivisor divides each family's CI schedules under the race detector,
// which slows the sessions several times.
const raceDivisor = 5

// familyCase is one family's small session and what faults may not change
// of its result.
type familyCase struct {
	name   string
	family protocol.Family
	spec   string
	// ignore lists the result's JSON keys faults may change: wall-time
	// costs, and times read from the roles' virtual clocks.
	ignore []string
	// schedules is how many schedules CI runs (about 5 s of the family's
	// sessions on a laptop core; divided by raceDivisor under -race).
	schedules int
	// timed: the result measures virtual time itself, so delays change it
	// legitimately; only its shape is compared.
	timed bool
}

var families = []familyCase{
	{name: "ping", family: ping.Family{}, timed: true, schedules: 2000, spec: `
protocol = "ping"
[roles]
participant = ["a", "b", "c"]
[params]
count = 4
`},
	{name: "samba", family: samba.Family{}, schedules: 1000, ignore: []string{"costs", "steps_seconds", "ms_per_step"}, spec: `
protocol = "samba"
[params]
algorithm = "ucb"
budget = 40
paillier_bits = 512
[simulation]
arms = [0.6, 0.5, 0.3]
seed = 3
`},
	{name: "mpccb", family: mpccb.NewFamily(), schedules: 1500, ignore: []string{"ms_per_step", "session_ms_per_step"}, spec: `
protocol = "mpccb"
[params]
steps = 6
epsilon = 0.1
dimensions = 4
arms = 3
[simulation]
parties = 2
dataset = "csv"
csv = "testdata/contexts.csv"
label = "class"
normalize = true
seed = 2
`},
	{name: "bai", family: bai.Family{}, schedules: 2000, spec: `
protocol = "bai"
[params]
algorithm = "dp_mase"
delta = 0.25
[simulation]
agents = 3
arms = [0.9, 0.5, 0.3, 0.1]
seed = 5
`},
	{name: "pfcb", family: pfcb.Family{}, schedules: 1500, spec: `
protocol = "pfcb"
[params]
algorithm = "pfcb"
rounds = 300
t_lo = 50
[simulation]
agents = 3
producers = 3
instance = "uniform"
seed = 4
instance_seed = 4
`},
}

// TestExploreFamilies runs random fault schedules against a small session
// of every family and checks the explorer's invariants after each (see the
// package doc); a failure prints its seed, its schedule shrunk, and how to
// replay it.
func TestExploreFamilies(t *testing.T) {
	n := 0 // each family's own
	if v := os.Getenv(envSchedules); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a whole number of schedules", envSchedules, v)
		}
	}
	first := int64(1)
	if v := os.Getenv(envSeed); v != "" {
		var err error
		if first, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want a whole number", envSeed, v)
		}
	}
	for _, fc := range families {
		t.Run(fc.name, func(t *testing.T) {
			e := newExplorer(t, fc, func(c *explore.Config) {
				if os.Getenv("BANDIT_EXPLORE_VERBOSE") != "" {
					c.OnOutcome = func(seed int64, s []sim.Fault, out explore.Outcome) {
						t.Logf("seed %d %s: completed %v %s", seed, sim.FormatSchedule(s), out.Completed, out.Reason)
					}
				}
			})
			if v := os.Getenv(envReplay); v != "" {
				replay(t, e, v)
				return
			}
			n := n
			if n == 0 {
				n = fc.schedules
				if raceEnabled {
					n = max(1, n/raceDivisor)
				}
			}
			start := time.Now()
			st, err := e.Explore(context.Background(), first, n)
			t.Logf("%s: %v, seeds %d…%d, in %v", fc.name, st, first, first+int64(st.Schedules)-1, time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("%v\nreplay: %s='%s' go test ./protocol/sim/explore -run 'TestExploreFamilies/%s$' -v",
					err, envReplay, shrunkOf(err), fc.name)
			}
			if st.Schedules >= 50 && (st.Completed == 0 || st.Aborted == 0) {
				t.Errorf("%v: want schedules of both ends, or the faults drawn test little", st)
			}
		})
	}
}

func shrunkOf(err error) string {
	if f, ok := err.(*explore.Failure); ok {
		return sim.FormatSchedule(f.Shrunk)
	}
	return ""
}

// replay runs one schedule and reports how it ended.
func replay(t *testing.T, e *explore.Explorer, text string) {
	schedule, err := sim.ParseSchedule(text)
	if err != nil {
		t.Fatal(err)
	}
	out, problem := e.Check(context.Background(), schedule)
	t.Logf("schedule %s: completed %v, reason %q", sim.FormatSchedule(schedule), out.Completed, out.Reason)
	if problem != nil {
		t.Fatal(problem)
	}
}

func newExplorer(t *testing.T, fc familyCase, opts ...func(*explore.Config)) *explore.Explorer {
	t.Helper()
	reg, err := protocol.NewRegistry(fc.family)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := protocol.ParseSpec(fc.name+".toml", []byte(fc.spec))
	if err != nil {
		t.Fatal(err)
	}
	cfg := explore.Config{Registry: reg, Spec: spec, Equal: equalJSON(fc.ignore, fc.timed)}
	for _, o := range opts {
		o(&cfg)
	}
	e, err := explore.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// equalJSON compares two runs' combined results as JSON, but for the keys
// in ignore, and the messages the roles sent. With timed, only the
// result's keys and the shapes of its values are compared.
func equalJSON(ignore []string, timed bool) func(want, got *sim.Result) error {
	return func(want, got *sim.Result) error {
		w, err := jsonObject(want.Result, ignore, timed)
		if err != nil {
			return err
		}
		g, err := jsonObject(got.Result, ignore, timed)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(w, g) {
			return fmt.Errorf("result %v, fault-free %v", g, w)
		}
		if want.Messages != got.Messages {
			return fmt.Errorf("the roles sent %d messages, %d without faults", got.Messages, want.Messages)
		}
		return nil
	}
}

func jsonObject(v any, ignore []string, timed bool) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range ignore {
		delete(m, k)
	}
	if timed {
		for k, v := range m {
			m[k] = shape(v)
		}
	}
	return m, nil
}

// shape replaces every number in v by zero.
func shape(v any) any {
	switch v := v.(type) {
	case float64:
		return 0.0
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = shape(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = shape(x)
		}
		return out
	}
	return v
}

// TestSchedulesReplayExactly checks what replaying a failure rests on: a
// schedule run twice ends the same way, with the same result, messages and
// virtual time, whatever Options.Workers asks for (faults run on the
// sequential driver).
func TestSchedulesReplayExactly(t *testing.T) {
	for _, fc := range families[1:3] { // samba and mpccb: parties of several roles
		t.Run(fc.name, func(t *testing.T) {
			reg, err := protocol.NewRegistry(fc.family)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := protocol.ParseSpec(fc.name+".toml", []byte(fc.spec))
			if err != nil {
				t.Fatal(err)
			}
			e := newExplorer(t, fc)
			equal := equalJSON(fc.ignore, fc.timed)
			for seed := int64(1); seed <= 20; seed++ {
				schedule := e.Schedule(seed)
				var runs [3]*sim.Result
				var errs [3]error
				for i, workers := range []int{1, 1, 2} {
					runs[i], errs[i] = sim.Run(context.Background(), reg, spec, sim.Options{Workers: workers,
						Faults: &sim.Faults{Schedule: schedule, Deadline: time.Hour}})
				}
				for i := 1; i < 3; i++ {
					switch {
					case (errs[0] == nil) != (errs[i] == nil):
						t.Fatalf("seed %d (%s): run %d ended with %v, run 0 with %v", seed, sim.FormatSchedule(schedule), i, errs[i], errs[0])
					case errs[0] != nil && errs[0].Error() != errs[i].Error():
						t.Errorf("seed %d: run %d aborted with %q, run 0 with %q", seed, i, errs[i], errs[0])
					case errs[0] == nil:
						if err := equal(runs[0], runs[i]); err != nil {
							t.Errorf("seed %d: run %d: %v", seed, i, err)
						}
						if runs[0].VirtualTime != runs[i].VirtualTime {
							t.Errorf("seed %d: run %d took %v of virtual time, run 0 %v", seed, i, runs[i].VirtualTime, runs[0].VirtualTime)
						}
					}
				}
			}
		})
	}
}
