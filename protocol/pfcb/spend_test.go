package pfcb

import (
	"math"
	"testing"
)

// TestSessionSpend checks the session's spend against values computed by
// hand from §5.3's ε^z = ε/(2 ln T) + ε/2^{z+1} and basic composition
// (Σ_z ε^z per value, twice that per pair; δ likewise): with Z rounds
// Σ_z ε^z = Z ε/(2 ln T) + ε (1/2 − 1/2^{Z+1}).
func TestSessionSpend(t *testing.T) {
	mod := func(f func(*Params)) Params {
		p := DefaultParams()
		f(&p)
		return p
	}
	inf := math.Inf(1)
	tests := []struct {
		name        string
		p           Params
		rounds      int
		value, pair float64
		deltaPair   float64
	}{
		// τ = 256 … 32,768: Z = 8; 8/(2 ln 10^5) = 0.347431, 1/2 − 1/2^9 = 0.498047.
		{"paper's settings, ε = 1", DefaultParams(), 8, 0.845482, 1.690965, 0.16},
		// Twice that: a pair's 3.38, which a policy of epsilon_total_pair = 2 refuses.
		{"ε = 2", mod(func(p *Params) { p.Epsilon = 2 }), 8, 1.690965, 3.381930, 0.16},
		// τ = 1 … 32,768: Z = 16; 16/(2 ln 10^5) = 0.694863, 1/2 − 1/2^17 = 0.499992.
		{"t_lo = 1", mod(func(p *Params) { p.TLo = 1 }), 16, 1.194864, 2.389727, 0.32},
		// τ = 1 … 65,536: Z = 17; 17/(2 ln 10^5) = 0.738292, 1/2 − 1/2^18 = 0.499996.
		{"t_lo = 1, t_hi = T", mod(func(p *Params) { p.TLo, p.THi = 1, 100000 }), 17, 1.238297, 2.476594, 0.34},
		// T = 20,000: τ = 256 … 16,384, Z = 7; 0.5 × (7/(2 ln 20,000) + 1/2 − 1/2^8) = 0.5 × (0.353402 + 0.496094).
		{"testnet: T = 20,000, ε = 0.5", mod(func(p *Params) { p.Rounds, p.Epsilon = 20000, 0.5 }), 7, 0.424752, 0.849505, 0.14},
		{"fcb publishes exact totals", mod(func(p *Params) { p.Algorithm = AlgFCB }), 8, inf, inf, 1},
		{"non_federated publishes nothing", mod(func(p *Params) { p.Algorithm = AlgNonFederated }), 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.validate(); err != nil {
				t.Fatal(err)
			}
			s := SessionSpend(tt.p)
			near := func(got, want float64) bool {
				return got == want || math.Abs(got-want) <= 5e-6
			}
			if s.Rounds != tt.rounds || !near(s.EpsilonValue, tt.value) || !near(s.EpsilonPair, tt.pair) || !near(s.DeltaPair, tt.deltaPair) {
				t.Errorf("SessionSpend = %+v, want %d rounds, ε %v per value, %v per pair, δ %v per pair", s, tt.rounds, tt.value, tt.pair, tt.deltaPair)
			}
			fig := tt.p.PolicyFigures()
			if fig["epsilon_total"] != s.EpsilonValue || fig["epsilon_total_pair"] != s.EpsilonPair || fig["delta_total_pair"] != s.DeltaPair {
				t.Errorf("PolicyFigures = %v, want the spend %+v", fig, s)
			}
			for key := range fig {
				if tt.p.PolicyFigureDoc(key) == "" {
					t.Errorf("figure %s has no description", key)
				}
			}
		})
	}
}
