package samba

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"
)

// movielensMeans reads the top-K MovieLens-100k arm means of the paper's
// prototype (testdata/, copied from shared/data/samba: μ = ratings ≥ 4 over
// all 943 users, sorted).
func movielensMeans(t testing.TB, k int) []float64 {
	t.Helper()
	f, err := os.Open("testdata/movielens_K100_sorted_desc.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, r := range rows[1 : k+1] {
		v, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestMovieLensStatistics: on the paper's MovieLens arms (K = 100, ε = 0.1,
// τ = 0.06) at N = 100,000, the standard algorithm — which SAMBA equals step
// for step (TestTheorem2) — reaches the paper's prototype's mean cumulative
// reward over 10 runs, within the prototype's spread.
func TestMovieLensStatistics(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("40 runs of 100,000 steps: .ci/run runs it without -race")
	}
	means := movielensMeans(t, 100)
	for _, c := range []struct {
		alg      string
		mean, sd float64 // the paper's prototype, 150 runs
	}{
		{"ucb", 47952, 75},
		{"thompson", 52572, 195},
		{"epsilon_greedy", 48172, 1476},
		{"softmax", 47737, 1012},
	} {
		p := DefaultParams()
		p.Algorithm, p.Budget, p.Tau = c.alg, 100000, 0.06
		const runs = 10
		sum := 0.0
		for seed := range int64(runs) {
			r, _, err := Reference(p, means, seed+1)
			if err != nil {
				t.Fatal(err)
			}
			sum += float64(r)
		}
		got := sum / runs
		// Within 4 standard errors of the prototype's mean, at least 1%.
		tol := math.Max(4*c.sd/math.Sqrt(runs), 0.01*c.mean)
		t.Logf("%s: mean %.0f over %d runs, paper %.0f ± %.0f", c.alg, got, runs, c.mean, c.sd)
		if math.Abs(got-c.mean) > tol {
			t.Errorf("%s: mean cumulative reward %.0f, the paper's prototype %.0f ± %.0f (tolerance %.0f)", c.alg, got, c.mean, c.sd, tol)
		}
	}
}
