package sessions

import (
	"strings"
	"testing"
)

func TestSanitizeReason(t *testing.T) {
	got := sanitizeReason("a\nb\x1b[31m" + strings.Repeat("x", 600))
	if strings.ContainsAny(got, "\n\x1b") || len(got) > maxReason+len("…") {
		t.Errorf("sanitizeReason kept control characters or length: %q", got)
	}
}
