package sessions

import (
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// The replay log keeps the newest frames within its bounds, and a
// message without a number (from a daemon that does not number them) is
// always handed over.
func TestTopicReplayLog(t *testing.T) {
	var r topicReplay
	var w topicWindows
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
	fresh := func(seq uint64) bool {
		ok, err := w.fresh(p, seq)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for range 2 {
		if !fresh(0) {
			t.Error("an unnumbered message was taken for a copy")
		}
	}
	if !fresh(1) || fresh(1) || r.nextSeq(p) != 1 || r.nextSeq(p) != 2 {
		t.Error("numbering or deduplication is off")
	}
}
