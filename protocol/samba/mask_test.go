package samba

import (
	"bytes"
	"math"
	"testing"
)

// TestSeedPRF: the function every data owner derives its masks and coins
// from is a function of the seed and (t, l) alone, spreads its values
// uniformly over [0, 1), and takes only 32-byte seeds.
func TestSeedPRF(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	f, err := newSeedPRF(seed)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newSeedPRF(bytes.Clone(seed))
	if err != nil {
		t.Fatal(err)
	}
	other, err := newSeedPRF(bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	// The value depends on the seed, t and l only, not on what was asked
	// before: f has answered other questions, g none.
	f.uniforms(9, 3)
	f.uniforms(1<<40, 2)
	if f.uniforms(5, 1) != g.uniforms(5, 1) {
		t.Error("two data owners with the same seed derive different values")
	}
	for _, c := range []struct {
		name string
		a, b [2]float64
	}{
		{"another step", f.uniforms(5, 1), f.uniforms(6, 1)},
		{"another iteration", f.uniforms(5, 1), f.uniforms(5, 2)},
		{"another seed", f.uniforms(5, 1), other.uniforms(5, 1)},
	} {
		if c.a == c.b {
			t.Errorf("%s: the same values %v", c.name, c.a)
		}
	}

	// Chi-square of both halves over 20 equal bins, 20,000 draws each:
	// with 19 degrees of freedom, 43.8 is exceeded with probability 0.001
	// (the seed is fixed, so the test is deterministic).
	const bins, draws = 20, 20000
	for half := range 2 {
		var count [bins]int
		for i := range draws {
			us := f.uniforms(uint64(i), uint32(i%3))
			if us[0] == us[1] {
				t.Fatalf("uniforms(%d): both halves %v", i, us[0])
			}
			u := us[half]
			if u < 0 || u >= 1 {
				t.Fatalf("uniforms(%d) = %v, outside [0, 1)", i, u)
			}
			count[int(u*bins)]++
		}
		chi2, want := 0.0, float64(draws)/bins
		for _, c := range count {
			chi2 += (float64(c) - want) * (float64(c) - want) / want
		}
		if chi2 > 43.8 {
			t.Errorf("half %d: chi-square %.1f over %d bins: not uniform (%v)", half, chi2, bins, count)
		}
	}

	for _, n := range []int{0, 16, 31, 33} {
		if _, err := newSeedPRF(make([]byte, n)); err == nil {
			t.Errorf("a %d-byte seed was accepted", n)
		}
	}
}

// TestMaskRange: an argmax mask's scale is 2^x with x in [−20, 20] and its
// offset within ±10 of it; a matching mask has no offset.
func TestMaskRange(t *testing.T) {
	alpha, err := newSeedPRF(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for step := range uint64(5000) {
		m := maskFor(alpha, step, 1, false)
		x := math.Log2(m.a)
		lo, hi = min(lo, x), max(hi, x)
		if x < -20 || x > 20 || math.Abs(m.b/m.a) > 10 {
			t.Fatalf("step %d: mask %+v outside its range", step, m)
		}
		if pm := maskFor(alpha, step, 2, true); pm.b != 0 {
			t.Fatalf("step %d: matching mask %+v has an offset", step, pm)
		}
	}
	// 5,000 draws of x spread over [−20, 20] come within 0.1 of both ends.
	if lo > -19.9 || hi < 19.9 {
		t.Errorf("the scale's exponent only spans [%.2f, %.2f] of [−20, 20]", lo, hi)
	}
}
