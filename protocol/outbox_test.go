package protocol

import (
	"fmt"
	"slices"
	"testing"
)

// TestOutboxReady: Ready hands over the messages in the order they were
// queued, with the latest progress and the result, and leaves the Outbox
// empty.
func TestOutboxReady(t *testing.T) {
	var o Outbox
	if rd := o.Ready(); !rd.Empty() {
		t.Fatalf("a new Outbox gave %+v", rd)
	}
	a, b := Party{Role: "a"}, Party{Role: "b", Index: 1}
	o.Send(Message{To: a, Body: []byte("1")})
	o.SetProgress(Progress{Step: 1, Total: 3})
	o.Send(Message{To: b, Body: []byte("2")})
	o.Send(Message{Topic: true, Body: []byte("3")})
	o.SetProgress(Progress{Step: 2, Total: 3, Activity: 5})
	o.SetResult(Result{Report: []byte("r")})
	rd := o.Ready()
	var got []string
	for _, m := range rd.Messages {
		got = append(got, m.String()+" "+string(m.Body))
	}
	want := []string{
		Message{To: a, Body: []byte("1")}.String() + " 1",
		Message{To: b, Body: []byte("2")}.String() + " 2",
		Message{Topic: true, Body: []byte("3")}.String() + " 3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("messages %q, want %q", got, want)
	}
	if rd.Progress == nil || *rd.Progress != (Progress{Step: 2, Total: 3, Activity: 5}) {
		t.Errorf("progress %+v, want the latest", rd.Progress)
	}
	if rd.Result == nil || string(rd.Result.Report) != "r" {
		t.Errorf("result %+v", rd.Result)
	}
	if rd := o.Ready(); !rd.Empty() {
		t.Errorf("a second Ready gave %+v", rd)
	}
	o.Send(Message{To: a})
	if len(rd.Messages) != 3 {
		t.Errorf("a message queued after Ready changed the batch it returned")
	}
}

// TestOutboxGrow: Grow makes room without queuing anything.
func TestOutboxGrow(t *testing.T) {
	var o Outbox
	o.Send(Message{Body: []byte("x")})
	o.Grow(100)
	o.Send(Message{Body: []byte("y")})
	rd := o.Ready()
	if len(rd.Messages) != 2 || cap(rd.Messages) < 101 {
		t.Errorf("a batch of %d messages with room for %d, want 2 with room for at least 101", len(rd.Messages), cap(rd.Messages))
	}
}

// TestOutboxReadyCopiedBatchesStayIntact: a driver may keep every batch
// ReadyCopied returns, so a batch never changes afterwards, whatever the
// role queues next — small batches cut from a slab, large ones handed over,
// empty ones between them — and a small batch has room for exactly its
// messages, so that appending to it cannot write into the next.
func TestOutboxReadyCopiedBatchesStayIntact(t *testing.T) {
	const chunk = 8
	var o Outbox
	type kept struct{ got, want []Message }
	var batches []kept
	for step := range 200 {
		n := []int{0, 1, 1, 2, 3, chunk, chunk + 1, 20}[step%8]
		var want []Message
		for j := range n {
			m := Message{To: Party{Role: "r", Index: j}, Body: fmt.Appendf(nil, "step %d message %d", step, j)}
			o.Send(m)
			want = append(want, m)
		}
		rd := o.ReadyCopied(chunk)
		if len(rd.Messages) != n {
			t.Fatalf("step %d: a batch of %d messages, want %d", step, len(rd.Messages), n)
		}
		if n > 0 && n <= chunk && cap(rd.Messages) != n {
			t.Fatalf("step %d: a batch of %d messages cut with room for %d", step, n, cap(rd.Messages))
		}
		batches = append(batches, kept{rd.Messages, want})
	}
	for i, k := range batches {
		if !slices.EqualFunc(k.got, k.want, func(a, b Message) bool {
			return a.To == b.To && string(a.Body) == string(b.Body)
		}) {
			t.Fatalf("batch %d changed after ReadyCopied returned it", i)
		}
	}
}

// TestOutboxReadyCopiedAllocations: once a slab is cut, a step that sends
// one message allocates nothing for its batch.
func TestOutboxReadyCopiedAllocations(t *testing.T) {
	const chunk = 64
	var o Outbox
	m := Message{Body: []byte("x")}
	o.Send(m)
	o.ReadyCopied(chunk) // the queue's array and the first slab
	allocs := testing.AllocsPerRun(chunk-2, func() {
		o.Send(m)
		o.ReadyCopied(chunk)
	})
	if allocs != 0 {
		t.Errorf("%v allocations a step, want 0", allocs)
	}
}
