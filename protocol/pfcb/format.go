package pfcb

import (
	"encoding/json"
	"fmt"
	"io"
)

// FormatResult is protocol.Family's FormatResult.
func (family) FormatResult(w io.Writer, result []byte) error {
	var r Result
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decoding a pfcb result: %w", err)
	}
	fmt.Fprintf(w, "P-FCB, %s: %d agents, %d rounds (%d of pure exploration)\n", r.Algorithm, r.Agents, r.Rounds, r.ExploreRounds)
	fmt.Fprintf(w, "  regret per agent       %.1f (total %.1f)\n", r.RegretPerAgent, r.TotalRegret)
	fmt.Fprintf(w, "  regret of each agent   %.1f\n", r.Regrets)
	fmt.Fprintf(w, "  constraint violations  %d\n", r.ConstraintViolations)
	fmt.Fprintf(w, "  communication rounds   %v (%d of %d shares learned)\n", r.CommunicationRounds, r.SharesLearned, r.SharesOffered)
	fmt.Fprintf(w, "  privacy                %s\n", r.Privacy)
	return nil
}
