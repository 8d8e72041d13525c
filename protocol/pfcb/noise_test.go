package pfcb

import (
	"math"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// gaussianDelta is Balle and Wang's Theorem 8, computed independently of the
// DP library: the least δ for which Gaussian noise of σ on a query of L2
// sensitivity s is (ε, δ)-DP.
func gaussianDelta(sigma, s, eps float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	a, b := s/(2*sigma), eps*sigma/s
	return phi(a-b) - math.Exp(eps)*phi(-a-b)
}

// epsilonFor returns the ε whose first communication round has ε^1 = e1.
func epsilonFor(p Params, e1 float64) float64 {
	return e1 / (1/(2*math.Log(float64(p.Rounds))) + 0.25)
}

// TestSigmaAtTheBoundary: the paper's σ = k √(2 ln(1.25/δ))/ε^z is
// (ε^z, δ)-DP only for ε^z < 1 (Dwork and Roth, Theorem A.1). Below 1 a
// round keeps it; from 1 on σ is the analytic Gaussian mechanism's, which
// meets (ε^z, δ) by Theorem 8 of Balle and Wang — at ε^z = 8.8 the classic
// σ would not.
func TestSigmaAtTheBoundary(t *testing.T) {
	// The float64 values of ε closest to ε^1 = 1 on either side.
	below := DefaultParams()
	below.Epsilon = epsilonFor(below, 1)
	for below.EpsilonZ(1) >= 1 {
		below.Epsilon = math.Nextafter(below.Epsilon, 0)
	}
	above := below
	for above.EpsilonZ(1) < 1 {
		above.Epsilon = math.Nextafter(above.Epsilon, 4)
	}
	for _, c := range []struct {
		eps  float64
		want string
	}{
		{epsilonFor(DefaultParams(), 0.5), CalibrationClassic},
		{below.Epsilon, CalibrationClassic},
		{above.Epsilon, CalibrationAnalytic},
		{epsilonFor(DefaultParams(), 1.0001), CalibrationAnalytic},
		{epsilonFor(DefaultParams(), 4), CalibrationAnalytic},
		{epsilonFor(DefaultParams(), 8.8), CalibrationAnalytic},
	} {
		p := DefaultParams()
		p.Epsilon = c.eps
		e1 := p.EpsilonZ(1)
		if got := p.Calibration(1); got != c.want {
			t.Errorf("ε^1 = %v: calibration %q, want %q", e1, got, c.want)
		}
		const k = 50
		sigma := p.Sigma(k, 1)
		switch p.Calibration(1) {
		case CalibrationClassic:
			if want := math.Sqrt(2*k*k*math.Log(1.25/p.Delta)) / e1; math.Abs(sigma-want) > 1e-9 {
				t.Errorf("ε^1 = %v: σ = %v, want the paper's %v", e1, sigma, want)
			}
		case CalibrationAnalytic:
			if want := privacy.AnalyticGaussianSigma(k, e1, p.Delta); sigma != want {
				t.Errorf("ε^1 = %v: σ = %v, want the analytic %v", e1, sigma, want)
			}
		}
		if d := gaussianDelta(sigma, k, e1); d > p.Delta*(1+1e-9) {
			t.Errorf("ε^1 = %v: σ = %v is only (ε^1, %v)-DP, not (ε^1, %v)", e1, sigma, d, p.Delta)
		}
		if _, err := (Family{}).ParseParams(map[string]any{"epsilon": p.Epsilon}); err != nil {
			t.Errorf("ε = %v (ε^1 = %v): %v", p.Epsilon, e1, err)
		}
	}
	// The premise: past ε^z ≈ 6.8 the classic σ is not (ε^z, δ)-DP.
	if d := gaussianDelta(privacy.GaussianSigma(50, 8.8, 0.01), 50, 8.8); d <= 0.01 {
		t.Fatalf("the classic σ at ε = 8.8 gives δ = %v", d)
	}
}

// TestEpsilonWithoutUsableNoiseIsRefused: an ε so large that e^{ε^z}
// overflows leaves the analytic mechanism no σ > 0; a session with it is
// refused at admission, naming the key, instead of failing when the agents
// first share (where it was a panic, reachable from a proposal's params).
func TestEpsilonWithoutUsableNoiseIsRefused(t *testing.T) {
	_, err := (Family{}).ParseParams(map[string]any{"epsilon": 1e4})
	if err == nil || !strings.Contains(err.Error(), "params.epsilon") {
		t.Fatalf("ε = 10⁴: err = %v, want a refusal naming params.epsilon", err)
	}
	for _, raw := range []map[string]any{{"epsilon": 1e4, "algorithm": AlgFCB}, {"epsilon": 1e4, "algorithm": AlgNonFederated}} {
		if _, err := (Family{}).ParseParams(raw); err != nil {
			t.Errorf("%v publishes no noise and needs none: %v", raw, err)
		}
	}
	// An agent that gets such params all the same fails with a reason at
	// its first communication round, and does not panic.
	for _, simulated := range []bool{true, false} {
		a := testAgent(t, AlgPFCB, simulated)
		env := envOf(t, a)
		a.p.Epsilon = 1e4
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("simulated %v: panic %v", simulated, r)
				}
			}()
			for i := 0; i < 1000 && err == nil && !a.waiting; i++ {
				err = drive(a, env, func() error { return a.advance(1000) })
			}
		}()
		if err == nil || !strings.Contains(err.Error(), "communication round 1: drawing the noise of this agent's share failed") {
			t.Errorf("simulated %v: err = %v, want the noise's failure", simulated, err)
		} else if strings.Contains(err.Error(), "sigma") || strings.Contains(err.Error(), "producer") {
			t.Errorf("simulated %v: the reason %q names σ or a producer, which follow from private capacities", simulated, err)
		}
	}
}

// TestResultStatesTheCalibration: the privacy report says per round which
// calibration its noise used.
func TestResultStatesTheCalibration(t *testing.T) {
	s := spec(t, AlgPFCB, 2, 3, 5000, "uniform", 1)
	s.Params["epsilon"] = 8.0 // T = 5,000: ε^z = 8/(2 ln T) + 8/2^{z+1} = 2.47, 1.47, 0.97, 0.72, 0.59
	res, _ := simulate(t, s, sim.Options{})
	want := []string{"analytic", "analytic", "classic", "classic", "classic"}
	if strings.Join(res.NoiseCalibration, " ") != strings.Join(want, " ") {
		t.Errorf("calibration per round %v (ε^z %v), want %v", res.NoiseCalibration, res.EpsilonPerRound, want)
	}
	if !strings.Contains(res.Privacy, "classic formula in 3 rounds") || !strings.Contains(res.Privacy, "Balle and Wang in 2") {
		t.Errorf("privacy: %s", res.Privacy)
	}
}
