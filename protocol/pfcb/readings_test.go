package pfcb

import (
	"math"
	"strings"
	"testing"
)

// TestReadingsCheckAndUpdate: with fcb_pool an fcb agent learns every exact
// share at weight 1, even one CheckandUpdate would refuse; pfcb, and fcb
// without it, keep Procedure 1 (ω1-interval, weight ω2).
func TestReadingsCheckAndUpdate(t *testing.T) {
	tests := []struct {
		name    string
		alg     string
		pool    bool
		w, y    float64
		learned bool
		wantW   float64
		wantY   float64
	}{
		{"fcb pool, far share", AlgFCB, true, 100, 90, true, 200, 140},
		{"fcb pool, near share", AlgFCB, true, 100, 50, true, 200, 100},
		{"fcb, far share refused", AlgFCB, false, 100, 90, false, 100, 50},
		{"fcb, near share weighted by ω2", AlgFCB, false, 100, 50, true, 1100, 550},
		{"pfcb ignores fcb_pool", AlgPFCB, true, 100, 90, false, 100, 50},
		{"pfcb, near share", AlgPFCB, true, 100, 50, true, 1100, 550},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testAgent(t, tt.alg, true)
			a.p.FCBPool = tt.pool
			a.t = 300
			a.W[0], a.Y[0] = 100, 50
			if got := a.checkAndUpdate(0, tt.w, tt.y); got != tt.learned {
				t.Errorf("learned = %v, want %v", got, tt.learned)
			}
			if a.W[0] != tt.wantW || a.Y[0] != tt.wantY {
				t.Errorf("W, Y = %v, %v, want %v, %v", a.W[0], a.Y[0], tt.wantW, tt.wantY)
			}
		})
	}
}

// TestReadingsUCBAndExploration: federated_ucb narrows only fcb's radius to
// Algorithm 1's √(3 ln(nt)/(2nW)); solo_explore lengthens only
// non_federated's exploration to the single agent's.
func TestReadingsUCBAndExploration(t *testing.T) {
	const n, tt, w = 3, 1000.0, 50.0
	plain := math.Sqrt(3 * math.Log(tt) / (2 * w))
	fed := math.Sqrt(3 * math.Log(n*tt) / (2 * n * w))
	for _, c := range []struct {
		alg  string
		want float64
	}{{AlgFCB, fed}, {AlgPFCB, plain}, {AlgNonFederated, plain}} {
		a := testAgent(t, c.alg, true)
		a.p.FederatedUCB = true
		a.W[0], a.Y[0] = w, w/2
		if got := a.ucb(0, math.Log(tt)) - 0.5; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: radius %v, want %v", c.alg, got, c.want)
		}
	}
	p := DefaultParams()
	p.SoloExplore = true
	for _, c := range []struct {
		alg  string
		want int64
	}{
		{AlgNonFederated, int64(math.Ceil(3 * math.Log(float64(p.Rounds)) / (2 * p.Zeta * p.Zeta)))},
		{AlgFCB, int64(math.Ceil(3 * math.Log(10*float64(p.Rounds)) / (2 * 10 * p.Zeta * p.Zeta)))},
		{AlgPFCB, int64(math.Ceil(3 * math.Log(10*float64(p.Rounds)) / (2 * 10 * p.Zeta * p.Zeta)))},
	} {
		p.Algorithm = c.alg
		if got := p.ExploreRounds(10); got != c.want {
			t.Errorf("%s: %d exploration rounds, want %d", c.alg, got, c.want)
		}
	}
}

// TestNewInstanceOf: the normal instances' spread and the capacities' range
// are the shape's; NewInstance is the paper's shape.
func TestNewInstanceOf(t *testing.T) {
	in, err := NewInstanceOf(InstanceShape{Kind: "normal", Agents: 3, Producers: 20, Center: 0.4, Spread: 0, MaxCapacity: 3}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range in.Qualities {
		if q != 0.4 || in.Costs[2][i] != 0.4 {
			t.Fatalf("spread 0: quality %v, cost %v, want 0.4", q, in.Costs[2][i])
		}
		if k := in.Capacities[1][i]; k < 1 || k > 3 {
			t.Fatalf("capacity %d outside [1, 3]", k)
		}
	}
	a, _ := NewInstance("normal", 3, 20, 0.4, 5)
	b, _ := NewInstanceOf(InstanceShape{Kind: "normal", Agents: 3, Producers: 20, Center: 0.4, Spread: 0.1, MaxCapacity: 50}, 5)
	for i := range a.Qualities {
		if a.Qualities[i] != b.Qualities[i] || a.Capacities[0][i] != b.Capacities[0][i] {
			t.Fatal("NewInstance is not NewInstanceOf with spread 0.1 and capacities up to 50")
		}
	}
	for _, bad := range []struct {
		shape InstanceShape
		want  string
	}{
		{InstanceShape{Kind: "normal", Agents: 2, Producers: 2, Spread: -1, MaxCapacity: 5}, "simulation.spread"},
		{InstanceShape{Kind: "normal", Agents: 2, Producers: 2, Spread: 0.1, MaxCapacity: 0}, "simulation.max_capacity"},
	} {
		if _, err := NewInstanceOf(bad.shape, 1); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: err = %v, want %q", bad.shape, err, bad.want)
		}
	}
}

// TestReadingsEveryRound: fcb_every_round makes an fcb session communicate
// in every round and leaves pfcb's schedule (τ doubling in [t_lo, t_hi]).
func TestReadingsEveryRound(t *testing.T) {
	p := DefaultParams()
	p.Rounds, p.FCBEveryRound = 1000, true
	p.Algorithm = AlgFCB
	if got := p.CommRounds(); len(got) != 1000 || got[0] != 1 || got[999] != 1000 {
		t.Errorf("fcb every round: %d rounds from %d", len(got), got[0])
	}
	p.Algorithm = AlgPFCB
	if got := p.CommRounds(); len(got) != 2 || got[0] != 256 || got[1] != 512 {
		t.Errorf("pfcb with fcb_every_round: rounds %v, want [256 512]", got)
	}
}
