package mpccb

import (
	"encoding/json"
	"fmt"
	"io"
)

// FormatResult is protocol.Family's FormatResult.
func (family) FormatResult(w io.Writer, result []byte) error {
	var r Result
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decoding an mpccb result: %w", err)
	}
	fmt.Fprintf(w, "Private contextual bandit: %d feature parties, %d arms, %d dimensions, %d steps, ε = %g, L = %d bits\n",
		r.Parties, r.Arms, r.Dimensions, r.Steps, r.Epsilon, r.PrecisionBits)
	fmt.Fprintf(w, "  average reward   %.4f (p″'s total over the steps)\n", r.AverageReward)
	if r.ReferenceAverageReward != nil {
		fmt.Fprintf(w, "  plaintext        %.4f on the same samples; same arm in %.2f%% of steps\n", *r.ReferenceAverageReward, 100**r.ArmAgreement)
		if r.DecisionAgreement != nil {
			fmt.Fprintf(w, "                   in the private learner's state, the same choice in %.2f%% of steps\n", 100**r.DecisionAgreement)
		}
	}
	if r.BestFixedArmReward != nil {
		fmt.Fprintf(w, "  best fixed arm   %.4f (one arm pulled at every step, in hindsight)\n", *r.BestFixedArmReward)
	}
	fmt.Fprintf(w, "  privacy          a_t is η = log(|A|/ε) = %.3f-DP per step (Theorem 1)\n", r.DPEta)
	fmt.Fprintf(w, "  per step         %.1f rounds, %.0f bytes among feature parties, %.0f bytes dealer → party 0, %.2f ms\n",
		r.RoundsPerStep, r.BytesPerStep, r.DealerBytesPerStep, r.SessionMsPerStep)
	if r.MsPerStep != nil {
		fmt.Fprintf(w, "  compute          %.3f ms per step inside all roles (simulation)\n", *r.MsPerStep)
	}
	for _, l := range r.Learns {
		fmt.Fprintf(w, "  learns: %s\n", l)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warning)
	}
	return nil
}
