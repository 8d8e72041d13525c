package mpccb

import "testing"

// TestMPCCBSeedZero checks that seed 0 is kept, not replaced by a default.
func TestMPCCBSeedZero(t *testing.T) {
	o := Options{Seed: 0}
	o.defaults()
	if o.Seed != 0 {
		t.Errorf("seed 0 became %d", o.Seed)
	}
}
