package bai

import (
	"encoding/json"
	"fmt"
	"io"
)

// FormatResult is protocol.Family's FormatResult.
func (family) FormatResult(w io.Writer, result []byte) error {
	var r Result
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decoding a bai result: %w", err)
	}
	fmt.Fprintf(w, "Best-arm identification, %s, %d agents, %d arms\n", r.Algorithm, r.Agents, r.K)
	if r.BestArm != nil {
		fmt.Fprintf(w, "  best arm           %d", *r.BestArm)
		if r.Correct != nil {
			fmt.Fprintf(w, " (correct: %v)", *r.Correct)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "  no answer          %s\n", r.NoAnswer)
	}
	fmt.Fprintf(w, "  sample complexity  %d interactions\n", r.SampleComplexity)
	fmt.Fprintf(w, "  eliminated         %v\n", r.EliminationOrder)
	fmt.Fprintf(w, "  votes              %d (an arm falls with more than M = %d)\n", r.Votes, r.ThresholdM)
	fmt.Fprintf(w, "  privacy            %s\n", r.Privacy)
	switch r.Algorithm {
	case AlgDPMASE:
		fmt.Fprintf(w, "                     ε = %v, β = %v, δ = %v\n", r.Epsilon, r.Beta, r.Delta)
	case AlgCorrupted:
		fmt.Fprintf(w, "                     η = %v, ξ = %v, η_ξ = %.4f, δ = %v, failure ≤ %.3g (Prop. 5.2, corrected)\n",
			r.Eta, r.Xi, r.EtaXi, r.Delta, r.FailureBoundProp52)
	}
	return nil
}
