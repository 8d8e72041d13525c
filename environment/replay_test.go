package environment

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const replayCSV = `# ratings of three movies, one row per step
arm0,arm1,arm2
1,0,0.5
0,1,0.25
1,1,0
`

func TestReplaySequential(t *testing.T) {
	file := writeFile(t, "r.csv", replayCSV)
	r, err := NewReplay(ReplayConfig{Label: testLabel, File: file, Order: OrderSequential}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Rows() != 3 || r.Columns() != 3 {
		t.Fatalf("%d rows, %d columns", r.Rows(), r.Columns())
	}
	ctx := context.Background()
	tests := []struct {
		q    protocol.Query
		want protocol.Outcome
	}{
		{pull(1, 0, 2), protocol.Outcome{ID: 1, Rewards: []float64{0.5}}},
		{pull(2, 1, 1, 2), protocol.Outcome{ID: 2, Rewards: []float64{1, 0.25}}},
		{protocol.Query{ID: 3, Kind: protocol.QueryRewards, Step: 2}, protocol.Outcome{ID: 3, Rewards: []float64{1, 1, 0}}},
		{protocol.Query{ID: 4, Kind: protocol.QueryContext, Step: 1}, protocol.Outcome{ID: 4, X: []float64{0, 1, 0.25}}},
		{protocol.Query{ID: 5, Kind: protocol.QueryProcure, Step: 0, Producers: []int{2, 0}, Quantities: []float64{1, 1}}, protocol.Outcome{ID: 5, Qualities: []float64{0.5, 1}}},
	}
	for _, tt := range tests {
		got, err := r.Answer(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v at step %d: got %+v, want %+v", tt.q.Kind, tt.q.Step, got, tt.want)
		}
	}
	// The outcome is the role's: changing it leaves the file's rows alone.
	o, _ := r.Answer(ctx, protocol.Query{ID: 6, Kind: protocol.QueryRewards, Step: 0})
	o.Rewards[0] = 99
	if o, _ = r.Answer(ctx, protocol.Query{ID: 7, Kind: protocol.QueryRewards, Step: 0}); o.Rewards[0] != 1 {
		t.Error("an outcome aliases the file's rows")
	}
	// A file of one column is one arm's, whatever its number.
	one, err := NewReplay(ReplayConfig{Label: testLabel, File: writeFile(t, "one.csv", "reward\n0.25\n1\n"), Order: OrderSequential}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := one.Answer(ctx, pull(1, 1, 7)); err != nil || !reflect.DeepEqual(o.Rewards, []float64{1}) {
		t.Errorf("one column, arm 7: got %v, %v", o, err)
	}
	if _, err := one.Answer(ctx, pull(1, 1, 0, 1)); err == nil || !strings.Contains(err.Error(), "arm 1, but replay file") {
		t.Errorf("one column, two arms: got %v", err)
	}
	for _, tt := range []struct {
		q    protocol.Query
		want string
	}{
		{pull(8, 3, 0), testLabel + ": pull at step 3: replay file " + file + " has 3 rows; step 3 asked for more"},
		{pull(9, 0, 3), testLabel + ": pull at step 0: arm 3, but replay file " + file + " has 3 columns (arm 0 to 2)"},
		{pull(10, 0), "the pull names no arm"},
	} {
		if _, err := r.Answer(ctx, tt.q); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

func TestReplaySample(t *testing.T) {
	file := writeFile(t, "r.csv", "1\n2\n3\n4\n")
	draw := func(seed byte) []float64 {
		r, err := NewReplay(ReplayConfig{Label: testLabel, File: file, Order: OrderSample}, rand.NewChaCha8([32]byte{seed}))
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for i := int64(0); i < 400; i++ {
			o, err := r.Answer(context.Background(), pull(uint64(i+1), i, 0))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, o.Rewards[0])
		}
		return got
	}
	a, b := draw(1), draw(1)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed drew different rows")
	}
	counts := map[float64]int{}
	for _, v := range a {
		counts[v]++
	}
	for v := 1.0; v <= 4; v++ {
		if counts[v] < 60 || counts[v] > 140 {
			t.Errorf("row %v drawn %d times of 400", v, counts[v])
		}
	}
	if _, err := NewReplay(ReplayConfig{Label: testLabel, File: file, Order: OrderSample}, nil); err == nil || !strings.Contains(err.Error(), "needs a source of randomness") {
		t.Errorf("got %v", err)
	}
}

func TestCheckReplay(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, text string
		columns    int
		steps      int64
		order      Order
		want       string // "" for valid; FILE stands for the file's path
	}{
		{"ok", replayCSV, 3, 3, OrderSequential, ""},
		{"no header", "1,2\n3,4\n", 2, 2, OrderSequential, ""},
		{"any width", "1,2\n3,4\n", 0, 0, OrderSequential, ""},
		{"sample needs no length", "1,2\n", 2, 1000, OrderSample, ""},
		{"missing", "", 0, 0, OrderSequential, "replay file: open FILE: no such file or directory"},
		{"empty", "\n# nothing\n", 0, 0, OrderSequential, "replay file FILE is empty"},
		{"header only", "arm0,arm1\n", 0, 0, OrderSequential, "replay file FILE has a header but no rows"},
		{"too short", replayCSV, 3, 4, OrderSequential, "replay file FILE has 3 rows; the session needs 4"},
		{"wrong width", replayCSV, 4, 0, OrderSequential, "replay file FILE has 3 columns; want 4"},
		{"ragged", "a,b\n1,2\n3\n", 0, 0, OrderSequential, "FILE:3: 1 columns; the first row has 2"},
		{"not a number", "1,2\n3,x\n", 0, 0, OrderSequential, `FILE:2: column 2: "x" is not a finite number`},
		{"first row not a number", "1,x\n3,4\n", 0, 0, OrderSequential, `FILE:1: column 2: "x" is not a finite number`},
		{"NaN", "1,2\nNaN,4\n", 0, 0, OrderSequential, `FILE:2: column 1: "NaN" is not a finite number`},
		{"bad quote", "1,2\n\"3,4\n", 0, 0, OrderSequential, "FILE:2: "},
		{"bad order", "1\n", 0, 0, "shuffled", `order: "shuffled" is not an order`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".csv")
			if tt.name != "missing" {
				if err := os.WriteFile(file, []byte(tt.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckReplay(file, tt.columns, tt.steps, tt.order)
			want := strings.ReplaceAll(tt.want, "FILE", file)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("got %v, want %q", err, want)
			}
		})
	}
}
