package pfcb

import (
	"math"
	"sort"
)

// Producer is what an agent knows of one producer for the oracle: a quality
// (an estimate, or the truth), its unit cost and its capacity.
type Producer struct {
	Q float64
	C float64
	K int
}

// Revenue is the expected revenue Σ l_i (ρ q_i − c_i) of procuring l at
// qualities q.
func Revenue(ps []Producer, l []int, rho float64) float64 {
	r := 0.0
	for i, p := range ps {
		r += float64(l[i]) * (rho*p.Q - p.C)
	}
	return r
}

// Feasible reports whether procuring l meets the quality constraint: the
// expected quality of the units bought, Σ l_i q_i / Σ l_i, is at least α
// (equivalently Σ l_i (q_i − α) ≥ 0). Buying nothing meets it.
func Feasible(ps []Producer, l []int, alpha float64) bool {
	return slack(ps, l, alpha) >= -1e-9
}

func slack(ps []Producer, l []int, alpha float64) float64 {
	s := 0.0
	for i, p := range ps {
		s += float64(l[i]) * (p.Q - alpha)
	}
	return s
}

// GreedySSA is the oracle of Deva, Abhishek and Gujar ("A Multi-Arm Bandit
// Approach to Subset Selection under Constraints", AAMAS 2021), in whole
// units. With per-unit revenue r_i = ρ q_i − c_i it sorts producers into
//
//	A: q ≥ α, r ≥ 0 — bought at capacity;
//	C: q < α, r > 0 — profitable but lower the quality;
//	B: q > α, r < 0 — unprofitable but raise the quality;
//	D: the rest — never bought;
//
// spends the quality surplus Σ_A k_i (q_i − α) on C in descending order of
// r/(α−q) (revenue per unit of quality spent), then pairs B, in ascending
// order of |r|/(q−α) (revenue lost per unit of quality gained), with the
// remaining C while a pair still pays: r_C/(α−q_C) > |r_B|/(q_B−α).
//
// Rounding: C units are bought with the floor of what the surplus allows and
// B units with the ceiling of what the next C units need (within capacity),
// so the running surplus Σ l_i (q_i − α) never goes below 0 and the constraint
// holds exactly; a last B unit may buy slightly more surplus than is used.
func GreedySSA(ps []Producer, rho, alpha float64, out []int) []int {
	var g Greedy
	return g.Solve(ps, rho, alpha, out)
}

// Greedy runs GreedySSA with scratch space kept between calls, for the hot
// loop of a simulation. The zero value is ready; it is not safe for
// concurrent use.
type Greedy struct {
	cs, bs []int
	ratio  []float64
}

// Solve is GreedySSA.
func (g *Greedy) Solve(ps []Producer, rho, alpha float64, out []int) []int {
	if cap(out) < len(ps) {
		out = make([]int, len(ps))
	}
	out = out[:len(ps)]
	if cap(g.ratio) < len(ps) {
		g.ratio = make([]float64, len(ps))
	}
	ratio := g.ratio[:len(ps)]
	cs, bs := g.cs[:0], g.bs[:0]
	surplus := 0.0
	for i, p := range ps {
		out[i] = 0
		r := rho*p.Q - p.C
		switch {
		case p.Q >= alpha && r >= 0:
			out[i] = p.K
			surplus += float64(p.K) * (p.Q - alpha)
		case p.Q < alpha && r > 0:
			cs = append(cs, i)
			ratio[i] = r / (alpha - p.Q) // revenue per unit of quality spent
		case p.Q > alpha && r < 0:
			bs = append(bs, i)
			ratio[i] = -r / (p.Q - alpha) // revenue lost per unit of quality gained
		}
	}
	g.cs, g.bs = cs, bs
	sort.SliceStable(cs, func(a, b int) bool { return ratio[cs[a]] > ratio[cs[b]] })
	sort.SliceStable(bs, func(a, b int) bool { return ratio[bs[a]] < ratio[bs[b]] })
	bi := 0
	for _, c := range cs {
		need := alpha - ps[c].Q // surplus one unit of c uses
		for out[c] < ps[c].K {
			if n := int(math.Floor(surplus/need + 1e-9)); n > 0 {
				n = min(n, ps[c].K-out[c])
				out[c] += n
				surplus -= float64(n) * need
				continue
			}
			// Buy B units to fund more C units, while the pair pays.
			for bi < len(bs) && out[bs[bi]] >= ps[bs[bi]].K {
				bi++
			}
			if bi == len(bs) || ratio[bs[bi]] >= ratio[c] {
				break
			}
			b := bs[bi]
			gain := ps[b].Q - alpha
			want := float64(ps[c].K-out[c])*need - surplus
			n := min(int(math.Ceil(want/gain-1e-9)), ps[b].K-out[b])
			if n <= 0 {
				break
			}
			out[b] += n
			surplus += float64(n) * gain
		}
	}
	return out
}

// Exact maximises Σ l_i (ρ q_i − c_i) subject to the quality constraint over
// every whole-unit procurement vector, by enumeration with pruning. It is for
// small instances (tests measure the greedy oracle's gap with it); it gives
// up, returning nil, past maxStates partial vectors.
func Exact(ps []Producer, rho, alpha float64, maxStates int) []int {
	m := len(ps)
	best := math.Inf(-1)
	var bestL []int
	l := make([]int, m)
	// optimistic[i] bounds the revenue producers i.. can still add.
	optimistic := make([]float64, m+1)
	for i := m - 1; i >= 0; i-- {
		optimistic[i] = optimistic[i+1] + math.Max(0, float64(ps[i].K)*(rho*ps[i].Q-ps[i].C))
	}
	// maxSlack[i] bounds the quality slack producers i.. can still add.
	maxSlack := make([]float64, m+1)
	for i := m - 1; i >= 0; i-- {
		maxSlack[i] = maxSlack[i+1] + math.Max(0, float64(ps[i].K)*(ps[i].Q-alpha))
	}
	states := 0
	var rec func(i int, rev, sl float64) bool
	rec = func(i int, rev, sl float64) bool {
		if states++; states > maxStates {
			return false
		}
		if rev+optimistic[i] <= best || sl+maxSlack[i] < -1e-9 {
			return true
		}
		if i == m {
			if sl >= -1e-9 && rev > best {
				best = rev
				bestL = append(bestL[:0], l...)
			}
			return true
		}
		for u := ps[i].K; u >= 0; u-- {
			l[i] = u
			if !rec(i+1, rev+float64(u)*(rho*ps[i].Q-ps[i].C), sl+float64(u)*(ps[i].Q-alpha)) {
				return false
			}
		}
		l[i] = 0
		return true
	}
	if !rec(0, 0, 0) {
		return nil
	}
	return bestL
}
