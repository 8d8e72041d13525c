package node

import (
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// TestCrashReason: what a session left open by a crash is recorded with.
func TestCrashReason(t *testing.T) {
	at := time.Date(2026, 11, 23, 4, 5, 6, 0, time.UTC)
	tests := []struct {
		name string
		s    apitype.Session
		want string
	}{
		{"steps", apitype.Session{State: stateRunning, Updated: &at, Progress: apitype.Progress{Step: 40, Total: 100}},
			"n3 restarted while the session was open; its record, last stored at 2026-11-23 04:05:06 UTC, showed step 40 of 100"},
		{"activity", apitype.Session{State: stateRunning, Updated: &at, Progress: apitype.Progress{Activity: 7}},
			"n3 restarted while the session was open; its record, last stored at 2026-11-23 04:05:06 UTC, showed 7 units of work done"},
		{"no progress yet", apitype.Session{State: stateRunning, Updated: &at},
			"n3 restarted while the session was open; its record was last stored at 2026-11-23 04:05:06 UTC"},
		{"proposed", apitype.Session{State: stateProposed, Updated: &at}, "n3 restarted while the session was open"},
		{"an older record", apitype.Session{State: stateRunning}, "n3 restarted while the session was open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := crashReason("n3", tt.s); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
