package mpccb

import "testing"

// TestStepRounds pins the rounds of one step (the session result's
// rounds_per_step) and checks the dealer's corrections still fit the
// largest window at the defaults: 11 rounds at P = 2 for 10 arms, within
// issue 25's target of 12 (20 at wire 1.1.0, before the fused truncations,
// the merged sign, the one-round AND and the folded exploration;
// learner.stepFused has the schedule).
func TestStepRounds(t *testing.T) {
	for _, c := range []struct {
		name       string
		arms, P    int
		wantRounds int
		wire       string
	}{
		{"A10 P2", 10, 2, 11, ""}, // 3 + 6 (sign) + 1 (AND) + 1 (o)
		{"A2 P2", 2, 2, 11, ""},
		{"A10 P3", 10, 3, 12, ""}, // one carry-save level
		{"A10 P5", 10, 5, 14, ""},
		{"A50 P2", 50, 2, 12, ""},   // the AND in two levels
		{"A100 P2", 100, 2, 13, ""}, // three
		{"A10 P2 wire 1.1.0", 10, 2, 20, wireV110},
		{"A100 P2 wire 1.1.0", 100, 2, 23, wireV110},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Arms, p.wire = c.arms, c.wire
			s, err := measureStep(p, c.P)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d rounds, %d words in the largest round, %d correction words", s.rounds, s.maxRound, s.corrections)
			if s.rounds != c.wantRounds {
				t.Errorf("%d rounds a step, want %d", s.rounds, c.wantRounds)
			}
			if c.arms == 10 && c.P == 2 && c.wire == "" && s.corrections*MaxWindow > maxBufferedCorrections {
				t.Errorf("%d correction words a step: the largest window no longer fits at the defaults", s.corrections)
			}
		})
	}
}
