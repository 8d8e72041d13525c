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
		{ownerConfig{Ratings: "/nonexistent/ratings"}, "ratings"},
	} {
		_, err := Family{}.DecodeLocal(RoleOwner, &protocol.LocalTable{Decode: func(v any) error { *(v.(*ownerConfig)) = c.cfg; return nil }})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := (Family{}).DecodeLocal(RoleOwner, nil); err == nil {
		t.Error("a data owner without an arm was admitted")
	}
}
