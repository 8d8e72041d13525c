package samba

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// TestReadyBatchesStayIntact: a driver may keep every batch Ready returns
// (the simulator keeps a role's batches until it has delivered a whole
// round), so a batch must never change afterwards, whatever the role queues
// next — small batches cut from a slab, large ones handed over, empty ones
// between them.
func TestReadyBatchesStayIntact(t *testing.T) {
	b := base{rep: &sambapb.Report{}}
	type kept struct {
		got, want []protocol.Message
	}
	var batches []kept
	for step := range 400 {
		n := []int{0, 1, 1, 2, 3, batchChunk, batchChunk + 1, 100}[step%8]
		var want []protocol.Message
		for j := range n {
			m := protocol.Message{To: protocol.Party{Role: RoleOwner, Index: j}, Body: fmt.Appendf(nil, "step %d message %d", step, j)}
			b.sendBody(m.To, m.Body)
			want = append(want, m)
		}
		rd := b.Ready()
		if len(rd.Messages) != n {
			t.Fatalf("step %d: a batch of %d messages, want %d", step, len(rd.Messages), n)
		}
		if n > 0 && n <= batchChunk && cap(rd.Messages) != n {
			t.Fatalf("step %d: a batch of %d messages cut with room for %d: appending to it could write into the next", step, n, cap(rd.Messages))
		}
		batches = append(batches, kept{rd.Messages, want})
	}
	for i, k := range batches {
		if !slices.EqualFunc(k.got, k.want, func(a, b protocol.Message) bool {
			return a.To == b.To && string(a.Body) == string(b.Body)
		}) {
			t.Fatalf("batch %d changed after Ready returned it", i)
		}
	}
}

// TestLeakage: each algorithm's result states what its iterations let comp
// learn.
func TestLeakage(t *testing.T) {
	tests := []struct {
		alg       string
		want, not []string
	}{
		{"ucb", []string{"takes an argmax"}, []string{"matches probabilities", "explore"}},
		{"thompson", []string{"takes an argmax"}, []string{"matches probabilities"}},
		{"epsilon_greedy", []string{"takes an argmax", "K equal scores"}, []string{"matches probabilities"}},
		{"epsilon_decreasing", []string{"K equal scores"}, nil},
		{"softmax", []string{"matches probabilities", "differences of the data owners' empirical means"}, []string{"takes an argmax"}},
		{"pursuit", []string{"takes an argmax", "matches probabilities", "2 iterations", "learns them exactly"}, nil},
	}
	for _, tt := range tests {
		alg, err := AlgorithmByName(tt.alg)
		if err != nil {
			t.Fatal(err)
		}
		got := leakage(alg, 1, 1)
		if strings.Contains(got, "batches") {
			t.Errorf("%s: a sequential session's leakage speaks of batches: %q", tt.alg, got)
		}
		if b := leakage(alg, 100, 1); !strings.HasPrefix(b, got) || !strings.Contains(b, "in batches of 100 steps") {
			t.Errorf("%s: a batched session's leakage %q does not add the batches' to %q", tt.alg, b, got)
		} else if strings.Contains(b, "one list a batch") != (tt.alg == "ucb") {
			t.Errorf("%s: a batched session's leakage %q says whether comp sees one list a batch for another algorithm than UCB", tt.alg, b)
		} else if strings.Contains(b, "tied largest scores itself (it sees the ties") != (tt.alg == "ucb") {
			t.Errorf("%s: a batched session's leakage %q says whether comp draws among the ties of a batch's one list for another algorithm than UCB", tt.alg, b)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: leakage %q does not say %q", tt.alg, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: leakage %q says %q", tt.alg, got, n)
			}
		}
	}
}
