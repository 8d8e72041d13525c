package pfcb

import "math"

// Spend is the privacy a session spends on each agent's procurement history,
// as a participant examining a proposal can compute it from the public
// parameters alone.
//
// params.epsilon is not the session's spend: it is the scale ε from which
// each communication round z draws its own budget
// ε^z = ε/(2 ln T) + ε/2^{z+1} (§5.3). Each round publishes, for every
// producer, a pair of values (w̃, ỹ), each (ε^z, δ)-DP with respect to the
// agent's procurement history (Gaussian mechanism, sensitivity the
// producer's capacity; §5.5). The paper combines the rounds by basic
// composition (Dwork and Roth 2014, Theorem 3.16: the ε and the δ of
// mechanisms run on the same data add up), and so do we: over the session a
// published value's ε is Σ_z ε^z and its δ is Z·δ, with Z the communication
// rounds; the two values of a pair are two releases of the same history,
// so a producer's pair spends twice that. At the paper's settings
// (T = 100,000, t_lo = 200, t_hi = 40,000: 8 rounds) Σ_z ε^z = 0.845 ε, a pair
// 1.69 ε; with t_lo = 1 (16 rounds) 1.19 ε and 2.39 ε.
type Spend struct {
	// Rounds is the number of communication rounds Z.
	Rounds int
	// EpsilonValue and DeltaValue are the session's (ε, δ) for one
	// published value (w̃_ij or ỹ_ij) over all its rounds.
	EpsilonValue, DeltaValue float64
	// EpsilonPair and DeltaPair are the session's (ε, δ) for a producer's
	// pair (w̃_ij, ỹ_ij) over all its rounds: twice a value's. This is the
	// privacy of an agent's procurement history with a producer, and what
	// a policy's epsilon_total_pair bounds.
	EpsilonPair, DeltaPair float64
}

// SessionSpend computes the privacy a session with parameters p spends, by
// basic composition over its communication rounds (see Spend). A pfcb
// session spends Σ_z ε^z per value; fcb publishes exact totals, so its
// spend is unbounded (+Inf) when it communicates at all; non_federated
// publishes nothing and spends 0.
func SessionSpend(p Params) Spend {
	z := len(p.CommRounds())
	s := Spend{Rounds: z}
	switch {
	case z == 0 || p.Algorithm == AlgNonFederated:
		s.Rounds = 0
	case p.Algorithm == AlgFCB:
		s.EpsilonValue, s.DeltaValue = math.Inf(1), 1
		s.EpsilonPair, s.DeltaPair = math.Inf(1), 1
	default:
		for i := 1; i <= z; i++ {
			s.EpsilonValue += p.EpsilonZ(i)
		}
		s.DeltaValue = float64(z) * p.Delta
		s.EpsilonPair, s.DeltaPair = 2*s.EpsilonValue, 2*s.DeltaValue
	}
	return s
}

// PolicyFigures are the public figures, computed from the parameters, that
// an organization's policy may bound as it bounds a parameter
// ([policy.pfcb.max] epsilon_total = 2). Their names are the result's:
//
//   - epsilon_total: the session's ε for one published value, by basic
//     composition over its communication rounds (Spend.EpsilonValue);
//     +Inf for fcb, 0 for non_federated.
//   - epsilon_total_pair: the same for a producer's pair (w̃, ỹ), twice
//     that (Spend.EpsilonPair): the privacy of an agent's procurement
//     history with a producer.
//   - delta_total, delta_total_pair: the session's δ for one value and for
//     a pair.
//   - communication_rounds: the rounds in which agents publish.
func (p Params) PolicyFigures() map[string]float64 {
	s := SessionSpend(p)
	return map[string]float64{
		"epsilon_total":        s.EpsilonValue,
		"epsilon_total_pair":   s.EpsilonPair,
		"delta_total":          s.DeltaValue,
		"delta_total_pair":     s.DeltaPair,
		"communication_rounds": float64(s.Rounds),
	}
}

// PolicyFigureDoc describes a figure of PolicyFigures for a decline reason.
func (Params) PolicyFigureDoc(key string) string {
	switch key {
	case "epsilon_total":
		return "the session's total ε for each published value, by basic composition over its communication rounds"
	case "epsilon_total_pair":
		return "the session's total ε for each producer's published pair (w̃, ỹ), by basic composition over its communication rounds"
	case "delta_total":
		return "the session's total δ for each published value"
	case "delta_total_pair":
		return "the session's total δ for each producer's published pair (w̃, ỹ)"
	case "communication_rounds":
		return "the rounds in which agents publish"
	}
	return ""
}
