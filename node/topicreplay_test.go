package node

import (
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

func TestSequenceSet(t *testing.T) {
	tests := []struct {
		name string
		add  []uint64
		want []bool // add's answers
		upto uint64
	}{
		{name: "in order", add: []uint64{1, 2, 3}, want: []bool{true, true, true}, upto: 3},
		{name: "repeats", add: []uint64{1, 1, 2, 1, 2}, want: []bool{true, false, true, false, false}, upto: 2},
		{name: "a gap filled", add: []uint64{1, 3, 4, 3, 2, 4}, want: []bool{true, true, true, false, true, false}, upto: 4},
		{name: "from above", add: []uint64{5, 4, 3, 2, 1}, want: []bool{true, true, true, true, true}, upto: 5},
		{name: "a gap left", add: []uint64{2, 3}, want: []bool{true, true}, upto: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s sequenceSet
			for i, v := range tc.add {
				if got := s.add(v); got != tc.want[i] {
					t.Fatalf("add(%d) #%d = %v, want %v", v, i, got, tc.want[i])
				}
			}
			if s.upto != tc.upto || len(s.above) != 0 && tc.upto == uint64(len(tc.add)) {
				t.Errorf("upto %d, above %v; want upto %d", s.upto, s.above, tc.upto)
			}
		})
	}
}

// The replay log keeps the newest frames within its bounds, and a
// message without a number (from a daemon that does not number them) is
// always handed over.
func TestTopicReplayLog(t *testing.T) {
	var r topicReplay
	start := time.Unix(1000, 0)
	for i := range topicLogSize + 10 {
		r.published([]byte{byte(i)}, start.Add(time.Duration(i)*time.Millisecond))
	}
	if len(r.log) != topicLogSize || r.log[0].frame[0] != byte(10) {
		t.Fatalf("log of %d frames from %d, want %d from 10", len(r.log), r.log[0].frame[0], topicLogSize)
	}
	if got := r.since(start.Add(time.Duration(topicLogSize+7) * time.Millisecond)); len(got) != 2 {
		t.Errorf("since: %d frames, want the last 2", len(got))
	}
	big := make([]byte, topicLogBytes/2+1)
	r.published(big, start.Add(time.Hour))
	r.published(big, start.Add(time.Hour))
	if len(r.log) != 1 || r.bytes != len(big) {
		t.Errorf("after two frames of half the byte bound: %d frames, %d bytes; want the last alone", len(r.log), r.bytes)
	}
	p := protocol.Party{Role: "agent", Index: 1}
	for range 2 {
		if !r.fresh(p, 0) {
			t.Error("an unnumbered message was taken for a copy")
		}
	}
	if !r.fresh(p, 1) || r.fresh(p, 1) || r.nextSeq(p) != 1 || r.nextSeq(p) != 2 {
		t.Error("numbering or deduplication is off")
	}
}
