package bai

import (
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// agentSchedule draws the active agent of each global step from P_N over the
// agents still active. Weights live in a Fenwick tree, so a draw and the
// removal of a stopped agent cost O(log N).
type agentSchedule struct {
	tree    []float64 // 1-based Fenwick tree of weights
	n       int
	removed []bool
	live    int
	total   float64
	budget  int64
	steps   int64
	u       *randsrc.Source
}

func newAgentSchedule(w []float64, budget int64, rand io.Reader) *agentSchedule {
	s := &agentSchedule{tree: make([]float64, len(w)+1), n: len(w), removed: make([]bool, len(w)), live: len(w),
		budget: budget, u: randsrc.New(rand)}
	for i, x := range w {
		s.add(i, x)
	}
	return s
}

func (s *agentSchedule) add(i int, x float64) {
	s.total += x
	for j := i + 1; j <= s.n; j += j & -j {
		s.tree[j] += x
	}
}

func (s *agentSchedule) weight(i int) float64 {
	sum := func(j int) float64 {
		v := 0.0
		for ; j > 0; j -= j & -j {
			v += s.tree[j]
		}
		return v
	}
	return sum(i+1) - sum(i)
}

// find returns the agent whose cumulative weight interval holds x.
func (s *agentSchedule) find(x float64) int {
	pos := 0
	bit := 1
	for bit*2 <= s.n {
		bit *= 2
	}
	for ; bit > 0; bit /= 2 {
		if pos+bit <= s.n && s.tree[pos+bit] <= x {
			pos += bit
			x -= s.tree[pos]
		}
	}
	return min(pos, s.n-1)
}

// Next implements protocol.Schedule.
func (s *agentSchedule) Next(active func(protocol.Party) bool) (protocol.Party, bool, string) {
	if s.budget > 0 && s.steps >= s.budget {
		return protocol.Party{}, false, fmt.Sprintf("the budget of %d interactions ran out before the global set held one arm", s.budget)
	}
	for s.live > 0 {
		i := s.find(s.u.Float() * s.total)
		p := protocol.Party{Role: RoleAgent, Index: i}
		if s.removed[i] {
			continue // rounding put the draw on a removed agent's empty interval
		}
		if active(p) {
			s.steps++
			return p, true, ""
		}
		// Stopped for good: drop it from P_N(t).
		s.removed[i] = true
		s.live--
		s.add(i, -s.weight(i))
		if s.live > 0 && s.total <= 0 {
			s.rebuild()
		}
	}
	return protocol.Party{}, false, EveryAgentStopped
}

// rebuild recomputes the tree from the live agents, should rounding have
// eroded the total.
func (s *agentSchedule) rebuild() {
	w := make([]float64, s.n)
	for i := range w {
		if !s.removed[i] {
			w[i] = s.weight(i)
		}
	}
	s.tree, s.total = make([]float64, s.n+1), 0
	for i, x := range w {
		s.add(i, max(x, 1e-300))
	}
}
