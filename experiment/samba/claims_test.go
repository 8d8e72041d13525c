package samba

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
)

// TestRankClaim: an algorithm is the best only beyond the runs' noise; a
// tie or an overlap leaves the claim unresolved, a single run too, and one
// point where another is better beyond the noise makes it fail.
func TestRankClaim(t *testing.T) {
	sum := func(xs ...float64) experiment.Summary { return experiment.Summarize(xs) }
	apart := map[string]experiment.Summary{"thompson": sum(110, 111, 112), "ucb": sum(100, 101, 102), "softmax": sum(90, 91, 92)}
	overlap := map[string]experiment.Summary{"thompson": sum(100, 105, 110), "ucb": sum(99, 104, 109), "softmax": sum(90, 91, 92)}
	tie := map[string]experiment.Summary{"thompson": sum(100, 101, 102), "ucb": sum(100, 101, 102)}
	single := map[string]experiment.Summary{"thompson": sum(110), "ucb": sum(100)}
	beaten := map[string]experiment.Summary{"thompson": sum(90, 91, 92), "ucb": sum(100, 101, 102)}
	for _, c := range []struct {
		name   string
		points []map[string]experiment.Summary
		dir    int
		want   string
	}{
		{"apart everywhere", []map[string]experiment.Summary{apart, apart}, 1, "holds"},
		{"overlapping at one point", []map[string]experiment.Summary{apart, overlap}, 1, "not resolved"},
		{"a tie is not above", []map[string]experiment.Summary{tie}, 1, "not resolved"},
		{"one run has no spread", []map[string]experiment.Summary{single}, 1, "not resolved"},
		{"beaten at one point", []map[string]experiment.Summary{apart, overlap, beaten}, 1, "does not hold"},
		{"the lowest, asked for the lowest", []map[string]experiment.Summary{beaten}, -1, "holds"},
	} {
		var ranks []rank
		for _, p := range c.points {
			ranks = append(ranks, rankBeyondNoise("thompson", p, c.dir))
		}
		if got := rankClaim("claim", ranks, "").Verdict(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestLinearClaim: the time is linear when every line fits with R² ≥ 0.99;
// a worse fit within the runs' noise leaves it unresolved, one beyond a
// point's interval makes it fail and says which algorithm.
func TestLinearClaim(t *testing.T) {
	sum := func(xs ...float64) experiment.Summary { return experiment.Summarize(xs) }
	xs := []float64{5000, 10000, 20000}
	straight := line{alg: "ucb", xs: xs, ys: []experiment.Summary{sum(1.0, 1.01, 0.99), sum(2.0, 2.01, 1.99), sum(4.0, 4.01, 3.99)}}
	noisy := line{alg: "pursuit", xs: xs, ys: []experiment.Summary{sum(0, 1, 2), sum(2, 3, 4), sum(3, 4, 5)}}
	bent := line{alg: "thompson", xs: xs, ys: []experiment.Summary{sum(1.0, 1.01, 0.99), sum(3.5, 3.51, 3.49), sum(4.0, 4.01, 3.99)}}
	for _, c := range []struct {
		name  string
		lines []line
		want  string
		names string
	}{
		{"straight", []line{straight}, "holds", ""},
		{"noisy", []line{straight, noisy}, "not resolved", "pursuit"},
		{"bent", []line{straight, noisy, bent}, "does not hold", "thompson"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := linearClaim("linear", c.lines, "note")
			if cl.Verdict() != c.want {
				t.Fatalf("%s (%s), want %s", cl.Verdict(), cl.Note, c.want)
			}
			if !strings.Contains(cl.Note, c.names) {
				t.Errorf("note %q does not name %s", cl.Note, c.names)
			}
		})
	}
}
