package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestSimulateBatchedSAMBA: `bandit-node simulate` of a SAMBA spec with
// params.batch = 100 (N − K = 1,997: nineteen batches of 100 and one of
// 97) reports the batch and the exactness against the batched reference,
// as it does for the sequential protocol.
func TestSimulateBatchedSAMBA(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "samba-batch.toml")
	text := "protocol = \"samba\"\n[params]\nalgorithm = \"thompson\"\nbudget = 2000\nbatch = 100\npaillier_bits = 512\n" +
		"[simulation]\narms = [0.53, 0.43, 0.36]\nseed = 4\n"
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "simulate", spec, "--json")
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	var got struct {
		Result struct {
			Batch           int    `json:"batch"`
			Reward          int64  `json:"cumulative_reward"`
			Reference       *int64 `json:"reference_cumulative_reward"`
			SameArmSequence *bool  `json:"same_arm_sequence"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := got.Result
	if r.Batch != 100 || r.Reference == nil || *r.Reference != r.Reward || r.SameArmSequence == nil || !*r.SameArmSequence {
		t.Errorf("batch %d, reward %d, reference %v, same arm sequence %v; want batch 100 and the batched reference's reward and arms", r.Batch, r.Reward, r.Reference, r.SameArmSequence)
	}
}
