package experiment

import (
	"slices"
	"strings"
	"testing"
)

// TestParseShard checks --shard's values: i/n with 1 ≤ i ≤ n, and the jobs
// each shard runs cover the grid once.
func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		err  string
	}{
		{"1/4", Shard{1, 4}, ""},
		{" 4/4 ", Shard{4, 4}, ""},
		{"1/1", Shard{1, 1}, ""},
		{"0/4", Shard{}, "i counts from 1 to n"},
		{"5/4", Shard{}, "i counts from 1 to n"},
		{"1/0", Shard{}, "n must be at least 1"},
		{"2", Shard{}, "want i/n"},
		{"a/4", Shard{}, "want i/n"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	var all []int
	for i := 1; i <= 3; i++ {
		all = append(all, Shard{i, 3}.Jobs(10)...)
	}
	slices.Sort(all)
	if len(all) != 10 || all[0] != 0 || all[9] != 9 || len(slices.Compact(all)) != 10 {
		t.Errorf("3 shards of 10 jobs run %v, want 0…9 once each", all)
	}
}
