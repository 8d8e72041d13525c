package mpccb

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
)

// TestLocalDataOutOfRange checks that a feature party refuses contexts whose
// part has norm above 1, and p″ rewards beyond the engine's range, before
// the session starts, naming the file, the row and the value found; and
// that data within range is accepted.
func TestLocalDataOutOfRange(t *testing.T) {
	dir := t.TempDir()
	a := protocol.Assignment{Roles: map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}}
	p := DefaultParams()
	p.Dimensions, p.Arms, p.Steps = 4, 2, 3
	// maxReward: 2^(61−40)/(√3/2 → 1) = 2^21 at L = 20; 2^13 at L = 24.
	cases := []struct {
		name string
		role string
		rows [][]float64
		file bool // write rows to a CSV file and name it, or pass them in memory
		edit func(*Params)
		want []string // phrases of the error; none when the data is accepted
	}{
		{"unit features", RoleFeature, [][]float64{{0.6, 0.8}, {1, 0}, {0, 0}}, true, nil, nil},
		{"unnormalised features file", RoleFeature, [][]float64{{0.6, 0.8}, {0, 1}, {3, 4}}, true, nil,
			[]string{"features-", ".csv, row 3", "norm 5", "at most 1"}},
		{"slightly long features", RoleFeature, [][]float64{{0.6, 0.8000001}, {0, 1}, {0, 1}}, false, nil,
			[]string{"the features, row 1", "norm 1"}},
		{"raw pixel values", RoleFeature, [][]float64{{0, 1}, {0, 1}, {255, 12}}, true, nil,
			[]string{"row 3", "norm 255.282"}},
		{"rewards in range", RoleReceiver, [][]float64{{0, 1}, {1, 0}, {-1, 2e6}}, true, nil, nil},
		{"rewards beyond the ring", RoleReceiver, [][]float64{{0, 1}, {1, 0}, {-1, 3e6}}, true, nil,
			[]string{"rewards-", ".csv, row 3", "3e+06", "2.097e+06", "precision_bits = 20"}},
		{"rewards beyond the ring at L = 24", RoleReceiver, [][]float64{{0, 1}, {1e4, 0}, {-1, 1}}, false,
			func(p *Params) { p.PrecisionBits = 24 }, []string{"the rewards, row 2", "10000", "8192"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := p
			if c.edit != nil {
				c.edit(&pp)
			}
			cfg := protocol.RoleConfig{Self: protocol.Party{Role: c.role}, Assignment: a}
			var err error
			switch c.role {
			case RoleFeature:
				cfg.Local = &FeatureLocal{Rows: c.rows}
				if c.file {
					path := filepath.Join(dir, "features-"+string(rune('a'+i))+".csv")
					if err := dataset.WriteFeatures(path, c.rows); err != nil {
						t.Fatal(err)
					}
					cfg.Local = &featureConfig{Features: path}
				}
				_, err = newFeatureParty(cfg, pp)
			case RoleReceiver:
				cfg.Local = &RewardLocal{Rows: c.rows}
				if c.file {
					path := filepath.Join(dir, "rewards-"+string(rune('a'+i))+".csv")
					if err := dataset.WriteRewards(path, c.rows); err != nil {
						t.Fatal(err)
					}
					cfg.Local = &rewardConfig{Rewards: path}
				}
				_, err = newReceiver(cfg, pp)
			}
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused data within range: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted out-of-range data, want an error with %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
