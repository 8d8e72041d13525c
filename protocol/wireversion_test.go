package protocol

import "testing"

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.0.0", "1.1.0", -1},
		{"2.0.0", "1.10.0", 1},
		{"1.10.0", "1.9.0", 1},
		{"1", "1.0.0", 0},
		{"1.0.0", "1.0.1", -1},
		{"1.0.x", "1.0.0", 1},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
