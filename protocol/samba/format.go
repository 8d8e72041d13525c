package samba

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
)

// FormatResult is protocol.Family's FormatResult.
func (family) FormatResult(w io.Writer, result []byte) error {
	var r Result
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decoding a samba result: %w", err)
	}
	fmt.Fprintf(w, "SAMBA, %s: K = %d data owners, budget N = %d\n", r.Algorithm, r.K, r.Budget)
	switch {
	case r.BatchGrowth > 1:
		fmt.Fprintf(w, "  batches of B = %d steps, each %g times the last (at most %d), each decided from the variables at its start\n", r.Batch, r.BatchGrowth, MaxBatch)
	case r.Batch > 1:
		fmt.Fprintf(w, "  batches of B = %d steps, each decided from the variables at its start\n", r.Batch)
	}
	fmt.Fprintf(w, "  cumulative reward  %d (decrypted by the data customer)\n", r.CumulativeReward)
	if r.ReferenceCumulativeReward != nil {
		fmt.Fprintf(w, "  standard algorithm %d from the same seed; same arm sequence: %v\n", *r.ReferenceCumulativeReward, *r.SameArmSequence)
	}
	if r.Batch > 1 || r.BatchGrowth > 1 {
		fmt.Fprintf(w, "  messages           %d (%d per full batch of B and iteration)\n", r.Messages, r.PerStep)
	} else {
		fmt.Fprintf(w, "  messages           %d (%d per step and iteration)\n", r.Messages, r.PerStep)
	}
	if r.StepsSeconds > 0 {
		fmt.Fprintf(w, "  steps              %.3f ms each: %.1f s from the first score to the last bits (the controller's clock)\n", r.MsPerStep, r.StepsSeconds)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "role\tmessages\tbytes\tAES-GCM\tPaillier\tbusy s\t")
	roles := make([]string, 0, len(r.Costs))
	for role := range r.Costs {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	for _, role := range roles {
		c := r.Costs[role]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.3f\t\n", role, c.Messages, c.Bytes, c.AESOps, c.PaillierOps, c.BusySeconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n  comp's leakage: %s\n", r.Leakage)
	return nil
}
