package config

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestPolicyBoundsDecode: the policy tables bound a family's public
// figures (pfcb's epsilon_total, bai's reward_range) as they bound its
// parameters; a key that is neither, or a key the policy table does not
// have, is a config error naming it.
func TestPolicyBoundsDecode(t *testing.T) {
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	for _, tt := range []struct {
		name, text, want string // want "" for a config that loads
	}{
		{"pfcb epsilon_total", "[policy.pfcb]\nroles = [\"*\"]\n[policy.pfcb.max]\nepsilon_total = 2\n", ""},
		{"pfcb epsilon_total_pair and delta", "[policy.pfcb]\nroles = [\"*\"]\n[policy.pfcb.max]\nepsilon_total_pair = 2\ndelta_total_pair = 0.1\n", ""},
		{"bai reward_range and epsilon", "[policy.bai]\nroles = [\"*\"]\n[policy.bai.min]\nreward_range = 0.5\n[policy.bai.max]\nepsilon = 1\n", ""},
		{"samba paillier_bits allowed lower", "[policy.samba]\nroles = [\"*\"]\n[policy.samba.min]\npaillier_bits = 1024\n", ""},
		{"a misspelt figure", "[policy.pfcb]\nroles = [\"*\"]\n[policy.pfcb.max]\nepsilon_totl = 2\n", "policy.pfcb.max.epsilon_totl: pfcb has no numeric parameter or figure epsilon_totl"},
		{"a figure of another family", "[policy.samba]\nroles = [\"*\"]\n[policy.samba.min]\nreward_range = 1\n", "policy.samba.min.reward_range: samba has no numeric parameter or figure reward_range"},
		{"a key the policy table does not have", "[policy.samba]\nroles = [\"*\"]\nmin_paillier_bits = 1024\n", "unknown key policy.samba.min_paillier_bits"},
		{"a figure's minimum above its maximum", "[policy.pfcb]\nroles = [\"*\"]\n[policy.pfcb.max]\nepsilon_total = 1\n[policy.pfcb.min]\nepsilon_total = 2\n", "policy.pfcb: min.epsilon_total = 2 is above max.epsilon_total = 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("/etc/bandit/config.toml", []byte(base+tt.text), testRegistry(t))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestAdmitPolicyBounds: admission declines a session whose parameters or
// figures are beyond the policy's bounds, naming both numbers and the key;
// a daemon's policy that does not set [policy.samba.min] paillier_bits
// accepts no modulus under 2048 bits, and one that sets it accepts what it
// says. The reasons name only public parameters.
func TestAdmitPolicyBounds(t *testing.T) {
	reg := testRegistry(t)
	parse := func(t *testing.T, fam string, raw map[string]any) (protocol.Family, any) {
		t.Helper()
		f, err := reg.Lookup(fam)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.ParseParams(raw)
		if err != nil {
			t.Fatal(err)
		}
		return f, p
	}
	open := "roles = [\"*\"]\ninitiators = [\"*\"]\n"
	tests := []struct {
		name, policy, fam string
		params            map[string]any
		want              string // "" when accepted
	}{
		{"samba, default policy, 2048 bits", "[policy.samba]\n" + open, "samba", map[string]any{}, ""},
		{"samba, default policy, 512 bits", "[policy.samba]\n" + open, "samba", map[string]any{"paillier_bits": int64(512)},
			"params.paillier_bits = 512 is under a's minimum of 2048 (policy.samba.min.paillier_bits is not set"},
		{"samba, default policy, 1024 bits", "[policy.samba]\n" + open, "samba", map[string]any{"paillier_bits": int64(1024)},
			"params.paillier_bits = 1024 is under a's minimum of 2048"},
		{"samba, 1024 allowed, 1024 bits", "[policy.samba]\n" + open + "[policy.samba.min]\npaillier_bits = 1024\n", "samba", map[string]any{"paillier_bits": int64(1024)}, ""},
		{"samba, 1024 allowed, 512 bits", "[policy.samba]\n" + open + "[policy.samba.min]\npaillier_bits = 1024\n", "samba", map[string]any{"paillier_bits": int64(512)},
			"params.paillier_bits = 512 is under a's minimum of 1024 (policy.samba.min.paillier_bits)"},
		{"samba, 4096 required, 2048 bits", "[policy.samba]\n" + open + "[policy.samba.min]\npaillier_bits = 4096\n", "samba", map[string]any{},
			"params.paillier_bits = 2048 is under a's minimum of 4096 (policy.samba.min.paillier_bits)"},
		{"pfcb, the paper's settings within epsilon_total", "[policy.pfcb]\n" + open + "[policy.pfcb.max]\nepsilon_total = 1\n", "pfcb", map[string]any{}, ""},
		{"pfcb, epsilon 4 over epsilon_total", "[policy.pfcb]\n" + open + "[policy.pfcb.max]\nepsilon_total = 2\n", "pfcb", map[string]any{"epsilon": 4.0},
			"epsilon_total = 3.382 (the session's total ε for each published value, by basic composition over its communication rounds) exceeds a's limit of 2 (policy.pfcb.max.epsilon_total)"},
		{"pfcb, a pair over epsilon_total_pair", "[policy.pfcb]\n" + open + "[policy.pfcb.max]\nepsilon_total_pair = 1.5\n", "pfcb", map[string]any{},
			"epsilon_total_pair = 1.691 (the session's total ε for each producer's published pair (w̃, ỹ)"},
		{"pfcb, t_lo = 1 over epsilon_total", "[policy.pfcb]\n" + open + "[policy.pfcb.max]\nepsilon_total = 1\n", "pfcb", map[string]any{"t_lo": int64(1)},
			"epsilon_total = 1.195 ("},
		{"pfcb, fcb publishes exact totals", "[policy.pfcb]\n" + open + "[policy.pfcb.max]\nepsilon_total = 100\n", "pfcb", map[string]any{"algorithm": "fcb"},
			"epsilon_total = +Inf ("},
		{"pfcb, epsilon itself bounded", "[policy.pfcb]\n" + open + "[policy.pfcb.max]\nepsilon = 1\n", "pfcb", map[string]any{"epsilon": 2.0},
			"params.epsilon = 2 exceeds a's limit of 1 (policy.pfcb.max.epsilon)"},
		{"bai, a range too narrow", "[policy.bai]\n" + open + "[policy.bai.min]\nreward_range = 0.5\n", "bai", map[string]any{"reward_max": 0.001},
			"reward_range = 0.001 (the width of the session's reward range, reward_max − reward_min) is under a's minimum of 0.5 (policy.bai.min.reward_range)"},
		{"bai, a wide range", "[policy.bai]\n" + open + "[policy.bai.min]\nreward_range = 0.5\n", "bai", map[string]any{"reward_min": -1.0, "reward_max": 3.0}, ""},
		{"bai, DP-MASE's epsilon over the limit", "[policy.bai]\n" + open + "[policy.bai.max]\nepsilon = 1\n", "bai", map[string]any{"algorithm": "dp_mase", "epsilon": 2.0},
			"epsilon = 2 (DP-MASE's ε for each agent's rewards) exceeds a's limit of 1 (policy.bai.max.epsilon)"},
		{"bai, DP-MASE's epsilon within", "[policy.bai]\n" + open + "[policy.bai.max]\nepsilon = 1\n", "bai", map[string]any{"algorithm": "dp_mase", "epsilon": 0.5}, ""},
		{"bai, central under an epsilon bound", "[policy.bai]\n" + open + "[policy.bai.max]\nepsilon = 1\n", "bai", map[string]any{"algorithm": "central"},
			"epsilon = +Inf (central: the agents send their raw rewards, which no ε protects) exceeds a's limit of 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("c.toml", []byte("[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"+tt.policy), reg)
			if err != nil {
				t.Fatal(err)
			}
			f, p := parse(t, tt.fam, tt.params)
			if _, err := cfg.Admit(f, p, "b", false, nil); tt.want == "" {
				if err != nil {
					t.Fatalf("declined: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
