package samba

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

func TestRatingsArm(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "item.csv")
	os.WriteFile(path, []byte("user,rating\n1,5\n2,3\n# a comment\n\n3,4\n4,1\n"), 0o644)
	r, err := LoadRatings(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ratings) != 4 {
		t.Fatalf("ratings %v, want 4", r.Ratings)
	}
	src := randsrc.New(rand.NewChaCha8([32]byte{1}))
	sum := 0
	for range 20000 {
		sum += r.Pull(src)
	}
	if got := float64(sum) / 20000; got < 0.47 || got > 0.53 { // 2 of 4 ratings are ≥ 4
		t.Errorf("mean reward %v, want about 0.5", got)
	}
	for _, c := range []struct{ text, want string }{
		{"1,5\n2,x\n", ":2:"},
		{"", "no ratings"},
		{"5\nNaN\n", ":2:"},
	} {
		os.WriteFile(path, []byte(c.text), 0o644)
		if _, err := LoadRatings(path, 4); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := LoadRatings(filepath.Join(dir, "missing"), 4); err == nil {
		t.Error("a missing file was accepted")
	}
}

func TestDecodeLocal(t *testing.T) {
	mu := 0.3
	for _, c := range []struct {
		cfg  ownerConfig
		want string
	}{
		{ownerConfig{}, "exactly one"},
		{ownerConfig{Bernoulli: &mu, Ratings: "x"}, "exactly one"},
		{ownerConfig{Bernoulli: func() *float64 { v := 1.5; return &v }()}, "bernoulli"},
		{ownerConfig{Ratings: "/nonexistent/ratings"}, "local.samba.data_owner.ratings: ratings file: open /nonexistent/ratings"},
	} {
		// A ratings file is checked when the daemon starts (CheckLocal),
		// and read when a data owner starts.
		raw := map[string]any{}
		if c.cfg.Bernoulli != nil {
			raw["bernoulli"] = *c.cfg.Bernoulli
		}
		if c.cfg.Ratings != "" {
			raw["ratings"] = c.cfg.Ratings
		}
		v, err := Family{}.DecodeLocal(RoleOwner, &protocol.LocalTable{Key: protocol.LocalKey(Name, RoleOwner), Raw: raw})
		if lc, ok := v.(protocol.LocalChecker); ok && err == nil {
			err = lc.CheckLocal()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := (Family{}).DecodeLocal(RoleOwner, nil); err == nil {
		t.Error("a data owner without an arm was admitted")
	}
}

// TestRatingsFileReadAtRoleStart: a data owner's ratings file is read when
// its simulated environment is built, as its role starts, so a file
// replaced between two sessions is used as it is then; one that went
// missing fails the role with the config key.
func TestRatingsFileReadAtRoleStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "item.csv")
	f := Family{}
	params, err := f.ParseParams(map[string]any{"algorithm": "ucb", "budget": int64(100), "paillier_bits": int64(512)})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := f.PrepareSimulation(map[string]any{"arms": []any{0.5, 0.4}}, protocol.Assignment{}, params)
	if err != nil {
		t.Fatal(err)
	}
	a := prep.Assignment
	build := func() (*armEnvironment, error) {
		e, err := f.SimulatedEnvironment(protocol.RoleConfig{SessionID: "test", Self: protocol.Party{Role: RoleOwner, Index: 0}, Assignment: a,
			Params: params, Local: RatingsFile{Path: path, Threshold: 4}, Rand: protocol.SeededRand(1, protocol.Party{Role: RoleOwner}), Clock: fixedClock{}})
		if err != nil {
			return nil, err
		}
		return e.(*armEnvironment), nil
	}
	for _, ratings := range []string{"5\n5\n", "1\n2\n3\n"} {
		if err := os.WriteFile(path, []byte(ratings), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := build()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(d.arm.(Ratings).Ratings), strings.Count(ratings, "\n"); got != want {
			t.Errorf("the role read %d ratings, the file now holds %d", got, want)
		}
	}
	os.Remove(path)
	if _, err := build(); err == nil || !strings.Contains(err.Error(), "local.samba.data_owner.ratings") {
		t.Errorf("a missing ratings file when the environment is built: %v", err)
	}
}
