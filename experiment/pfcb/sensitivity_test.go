package pfcb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// TestPFCBSensitivitySmall runs the study on one short instance with one
// setting besides the defaults: the setting reruns only the algorithm it
// concerns, the table's ratios are its regrets', and the files are written.
func TestPFCBSensitivitySmall(t *testing.T) {
	reg, err := protocol.NewRegistry(pfcb.Family{})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := RunSensitivity(context.Background(), reg, SensitivityOptions{Out: out, Rounds: 600, Instances: 1, Runs: 1, Workers: 1,
		Seed: 3, Settings: []string{"fcb_pool"}})
	if err != nil {
		t.Fatal(err)
	}
	// defaults: 2 families × 3 algorithms; fcb_pool: FCB on 2 families;
	// under the closest setting, P-FCB at ε 0.25 and 4 and with n = 2.
	if rep.Jobs != 6+2+6 {
		t.Errorf("%d distinct sessions, want 14", rep.Jobs)
	}
	if len(rep.Cells) != 4 {
		t.Fatalf("%d cells, want 2 settings × 2 families", len(rep.Cells))
	}
	for i, c := range rep.Cells {
		if c.PRatio != c.PFCB/c.FCB || c.NRatio != c.NonFed/c.FCB || !(c.FCB > 0) {
			t.Errorf("cell %d %+v: ratios are not the regrets'", i, c)
		}
	}
	for fam := range 2 {
		d, p := rep.Cells[fam], rep.Cells[2+fam]
		if p.Setting != "fcb_pool" || p.PFCB != d.PFCB || p.NonFed != d.NonFed {
			t.Errorf("%s: fcb_pool changed P-FCB or Non-federated (%v, %v; defaults %v, %v)", p.Family, p.PFCB, p.NonFed, d.PFCB, d.NonFed)
		}
	}
	if len(rep.Claims) != 10 {
		t.Errorf("%d claims, want 5 per family", len(rep.Claims))
	}
	md, err := os.ReadFile(filepath.Join(out, "pfcb_sensitivity.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## uniform instances", "| fcb_pool |", "## Which settings reproduce the paper", "EXP3 (normal)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("pfcb_sensitivity.md lacks %q", want)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, "pfcb_sensitivity_runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(csv), "\n"); rows != 1+14 {
		t.Errorf("pfcb_sensitivity_runs.csv has %d lines, want a header and 14 runs", rows)
	}
}

func TestPFCBSensitivityOptions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg, err := protocol.NewRegistry(pfcb.Family{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    SensitivityOptions
		want string
	}{
		{"negative", SensitivityOptions{Runs: -1}, "must not be negative"},
		{"too short", SensitivityOptions{Rounds: 100}, "rounds 100 does not suit"},
		{"unknown setting", SensitivityOptions{Settings: []string{"zeta=7"}}, `no setting "zeta=7"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Out = t.TempDir()
			if _, err := RunSensitivity(ctx, reg, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCurveAt(t *testing.T) {
	r := &pfcb.Result{Curve: []float64{1, 2, 3}, CurveEvery: 10}
	for _, c := range []struct {
		t    int64
		want float64
	}{{5, 0}, {10, 1}, {25, 2}, {30, 3}, {100, 3}} {
		if got := curveAt(r, c.t); got != c.want {
			t.Errorf("curveAt(%d) = %v, want %v", c.t, got, c.want)
		}
	}
}
