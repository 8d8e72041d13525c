package samba

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// ArmSource is a data owner's arm: each pull draws a reward of 0 or 1.
type ArmSource interface {
	Pull(r *randsrc.Source) int
}

// Bernoulli is an arm whose rewards are Bernoulli(Mu).
type Bernoulli struct{ Mu float64 }

// Pull implements ArmSource.
func (b Bernoulli) Pull(r *randsrc.Source) int {
	if r.Float() < b.Mu {
		return 1
	}
	return 0
}

// Ratings replays real data: each pull samples one of the item's ratings,
// with replacement, and the reward is 1 when it is at least Threshold.
type Ratings struct {
	Ratings   []float64
	Threshold float64
}

// Pull implements ArmSource.
func (x Ratings) Pull(r *randsrc.Source) int {
	i := int(r.Float() * float64(len(x.Ratings)))
	if x.Ratings[min(i, len(x.Ratings)-1)] >= x.Threshold {
		return 1
	}
	return 0
}

// RatingsFile is a data owner's ratings file as its config names it. It is
// read when a session's data owner starts, so that a file updated between
// sessions is used as it is then, and checked when the daemon starts
// (protocol.LocalChecker); commands that only read the config to reach the
// daemon do not read it.
type RatingsFile struct {
	Path      string  `json:"ratings"`
	Threshold float64 `json:"threshold"`
}

// Load reads the file (LoadRatings), naming the config key in an error.
func (f RatingsFile) Load() (Ratings, error) {
	r, err := LoadRatings(f.Path, f.Threshold)
	if err != nil {
		return Ratings{}, fmt.Errorf("local.samba.data_owner.ratings: %w", err)
	}
	return r, nil
}

// CheckLocal implements protocol.LocalChecker: the file reads as ratings.
func (f RatingsFile) CheckLocal() error {
	_, err := f.Load()
	return err
}

// maxRatings bounds a ratings file.
const maxRatings = 10_000_000

// LoadRatings reads a ratings file: one rating per line, or the last field of
// a comma-separated line; blank lines and lines starting with # are skipped,
// and so is a first line that is not a number (a header).
func LoadRatings(path string, threshold float64) (Ratings, error) {
	f, err := os.Open(path)
	if err != nil {
		return Ratings{}, fmt.Errorf("ratings file: %w", err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		v, err := strconv.ParseFloat(strings.TrimSpace(fields[len(fields)-1]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			if line == 1 {
				continue // a header
			}
			return Ratings{}, fmt.Errorf("%s:%d: %q is not a rating", path, line, text)
		}
		if out = append(out, v); len(out) > maxRatings {
			return Ratings{}, fmt.Errorf("%s: more than %d ratings", path, maxRatings)
		}
	}
	if err := sc.Err(); err != nil {
		return Ratings{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return Ratings{}, fmt.Errorf("%s holds no ratings", path)
	}
	return Ratings{Ratings: out, Threshold: threshold}, nil
}

// armEnvironment is a data owner's simulated environment: its ArmSource,
// drawing from its own stream.
type armEnvironment struct {
	arm  ArmSource
	draw *randsrc.Source
}

// Answer implements protocol.Environment: a pull of the arm.
func (e *armEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	if q.Kind != protocol.QueryPull || len(q.Arms) != 1 {
		return protocol.Outcome{}, fmt.Errorf("a data owner's arm answers pulls of one arm, not a %s query of %d arms", q.Kind, len(q.Arms))
	}
	r := float64(e.arm.Pull(e.draw))
	if err := e.draw.Err(); err != nil {
		return protocol.Outcome{}, err
	}
	return protocol.Outcome{ID: q.ID, Rewards: []float64{r}}, nil
}

// Immediate implements protocol.Environment.
func (*armEnvironment) Immediate() bool { return true }

// Close implements protocol.Environment.
func (*armEnvironment) Close() error { return nil }
