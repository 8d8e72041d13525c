package experiment

import "testing"

// TestCompare: an order holds beyond noise only when the 95 % intervals
// are apart; overlapping intervals, a tie, or a single run leave it
// unresolved.
func TestCompare(t *testing.T) {
	tight := func(m float64) Summary { return Summarize([]float64{m - 0.01, m, m + 0.01}) }
	tests := []struct {
		name     string
		a, b     Summary
		want     int
		holds    bool
		resolved bool
	}{
		{"apart, above", tight(2), tight(1), 1, true, true},
		{"apart, below", tight(1), tight(2), -1, false, true},
		{"overlapping", Summarize([]float64{1, 3}), Summarize([]float64{1.5, 2.5}), 0, false, false},
		{"a tie", tight(1), tight(1), 0, false, false},
		{"one run each", Summarize([]float64{5}), Summarize([]float64{1}), 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare = %d, want %d", got, tt.want)
			}
			if h, r := Ordered(tt.a, tt.b); h != tt.holds || r != tt.resolved {
				t.Errorf("Ordered = %v, %v; want %v, %v", h, r, tt.holds, tt.resolved)
			}
		})
	}
	for _, c := range []struct {
		claim Claim
		want  string
	}{{Claim{Holds: true}, "holds"}, {Claim{}, "does not hold"}, {Claim{Unresolved: true}, "not resolved"}} {
		if got := c.claim.Verdict(); got != c.want {
			t.Errorf("%+v: verdict %q, want %q", c.claim, got, c.want)
		}
	}
}

// TestRising: a chain of means rises beyond noise only when every link
// does; one link that falls beyond noise fails it, an overlap leaves it
// unresolved.
func TestRising(t *testing.T) {
	tight := func(m float64) Summary { return Summarize([]float64{m - 0.01, m, m + 0.01}) }
	wide := func(m float64) Summary { return Summarize([]float64{m - 1, m, m + 1}) }
	for _, c := range []struct {
		name             string
		xs               []Summary
		holds, unresolve bool
	}{
		{"rising apart", []Summary{tight(1), tight(2), tight(3)}, true, false},
		{"one overlap", []Summary{tight(1), wide(2), wide(2.5)}, false, true},
		{"one fall", []Summary{tight(1), tight(3), tight(2)}, false, false},
		{"a fall after an overlap", []Summary{wide(1), wide(1.2), tight(-5)}, false, false},
		{"one run", []Summary{Summarize([]float64{1}), Summarize([]float64{2})}, false, true},
	} {
		if h, u := Rising(c.xs...); h != c.holds || u != c.unresolve {
			t.Errorf("%s: Rising = %v, %v; want %v, %v", c.name, h, u, c.holds, c.unresolve)
		}
	}
}

// TestWithinNoiseOfLine: a line through the means passes within every
// point's interval when the points' spread covers their departure from it,
// not when one point lies off the line by more than its noise, nor with a
// single run (no spread).
func TestWithinNoiseOfLine(t *testing.T) {
	sum := func(xs ...float64) Summary { return Summarize(xs) }
	xs := []float64{1, 2, 3}
	for _, c := range []struct {
		name string
		ys   []Summary
		want bool
	}{
		{"on the line", []Summary{sum(0.9, 1, 1.1), sum(1.9, 2, 2.1), sum(2.9, 3, 3.1)}, true},
		{"bent within the noise", []Summary{sum(0.5, 1, 1.5), sum(1.7, 2.2, 2.7), sum(2.5, 3, 3.5)}, true},
		{"bent beyond the noise", []Summary{sum(0.99, 1, 1.01), sum(2.49, 2.5, 2.51), sum(2.99, 3, 3.01)}, false},
		{"one run", []Summary{sum(1), sum(2), sum(3)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := WithinNoiseOfLine(xs, c.ys); got != c.want {
				t.Errorf("WithinNoiseOfLine = %v, want %v", got, c.want)
			}
		})
	}
	if WithinNoiseOfLine([]float64{1, 1}, []Summary{sum(1, 2), sum(1, 2)}) {
		t.Error("a line through one x")
	}
}
