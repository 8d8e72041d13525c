package samba

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol/samba"
)

// sambaIterations is nb_A: the iterations of SAMBA's core per step.
func sambaIterations(alg string) int64 {
	a, err := samba.AlgorithmByName(alg)
	if err != nil {
		return 1
	}
	return int64(a.Iterations())
}

// sambaClaims checks the paper's claims about Figure 8 (Section 6.2, and
// Theorems 2 and 4 which it illustrates) against the points. Thresholds are
// stated in each claim's note.
func sambaClaims(o Options, runs []Session, pts map[sambaKey]sambaPoint) []experiment.Claim {
	var claims []experiment.Claim
	add := func(text string, holds bool, note string, args ...any) {
		claims = append(claims, experiment.Claim{Text: text, Holds: holds, Note: fmt.Sprintf(note, args...)})
	}
	ks := o.Ks
	kmin, kmax := ks[0], ks[len(ks)-1]
	n := o.Budget
	budgets := sambaBudgets(n, kmax, kmax)
	algs := sambaAlgorithms()
	at := func(alg string, k int, b int64) sambaPoint { return pts[sambaKey{alg, k, b}] }

	// Theorem 2.
	exact := 0
	for _, r := range runs {
		if r.Exact {
			exact++
		}
	}
	add("Theorem 2: SAMBA returns exactly the standard algorithm's cumulative reward", exact == len(runs),
		"%d of %d runs: the same cumulative reward and the same arms pulled in the same order", exact, len(runs))

	// Linear in N and in K.
	if len(budgets) >= 3 {
		minR2, lo, hi := 1.0, math.Inf(1), math.Inf(-1)
		var lines []line
		for _, alg := range algs {
			l := line{alg: alg}
			for _, b := range budgets {
				l.xs = append(l.xs, float64(b))
				l.ys = append(l.ys, at(alg, kmax, b).Steps)
			}
			slope, r2 := l.fit()
			minR2 = min(minR2, r2)
			lo, hi = min(lo, 1e3*slope), max(hi, 1e3*slope)
			lines = append(lines, l)
		}
		claims = append(claims, linearClaim("the execution time is linear in N", lines,
			fmt.Sprintf("K = %d, N = %s, the steps' time (the set-up's key generation excluded): least-squares lines, R² ≥ %.4f for every algorithm (threshold 0.99); %.3g–%.3g ms per step", kmax, joinInt64(budgets), minR2, lo, hi)))
	} else {
		add("the execution time is linear in N", false, "not tested: fewer than three budgets above K = %d", kmax)
	}
	if len(ks) >= 3 {
		minR2 := 1.0
		var lines []line
		for _, alg := range algs {
			l := line{alg: alg}
			for _, k := range ks {
				l.xs = append(l.xs, float64(k))
				l.ys = append(l.ys, at(alg, k, n).Steps)
			}
			_, r2 := l.fit()
			minR2 = min(minR2, r2)
			lines = append(lines, l)
		}
		claims = append(claims, linearClaim("the execution time is linear in K", lines,
			fmt.Sprintf("N = %d, K = %s, the steps' time: R² ≥ %.4f for every algorithm (threshold 0.99)", n, joinInt(ks), minR2)))
	} else if kmax > kmin {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, alg := range algs {
			r := at(alg, kmax, n).Secure.Mean / at(alg, kmin, n).Secure.Mean
			lo, hi = min(lo, r), max(hi, r)
		}
		ratio := float64(kmax) / float64(kmin)
		add("the execution time is linear in K", hi <= 1.1*ratio && lo > 1,
			"only two values of K, which any line fits: from K = %d to %d (×%g) the time grows ×%.2f–×%.2f, no faster than linearly (threshold ×%.3g); give --k 10,25,50,100 to test the line", kmin, kmax, ratio, lo, hi, 1.1*ratio)
	}

	// The overhead.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, alg := range algs {
		for _, k := range ks {
			v := at(alg, k, n).Overhead
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	add("SAMBA's overhead over the standard algorithms is at most an order of magnitude", hi <= 10,
		"N = %d: secure / standard time ×%.0f–×%.0f over the algorithms and K (threshold ×10); the standard algorithms here are compiled Go, microseconds a step, where the paper's were Python", n, lo, hi)

	// Steeper in K than in N.
	if len(budgets) >= 2 && kmax > kmin {
		var eN, eK []float64
		for _, alg := range algs {
			b0, b1 := budgets[0], budgets[len(budgets)-1]
			eN = append(eN, math.Log(at(alg, kmax, b1).Secure.Mean/at(alg, kmax, b0).Secure.Mean)/math.Log(float64(b1)/float64(b0)))
			eK = append(eK, math.Log(at(alg, kmax, n).Secure.Mean/at(alg, kmin, n).Secure.Mean)/math.Log(float64(kmax)/float64(kmin)))
		}
		steeper := 0
		for i := range algs {
			if eK[i] > eN[i] {
				steeper++
			}
		}
		add("the time grows more steeply with K than with N (Paillier's O(K) operations)", steeper == len(algs),
			"elasticity d ln t / d ln K = %s against d ln t / d ln N = %s (algorithms in the order %s): steeper in K for %d of %d",
			joinFloat(eK, 2), joinFloat(eN, 2), strings.Join(algs, ", "), steeper, len(algs))
	}

	// Theorem 4's counts.
	aesOK, paillierOK, msgOK := true, true, true
	maxExtra := int64(0)
	for _, r := range runs {
		steps := (r.Budget - int64(r.K)) * sambaIterations(r.Algorithm)
		k := int64(r.K)
		aes := int64(0)
		for _, c := range r.Costs {
			aes += c.AESOps
		}
		if aes != 4*k*steps {
			aesOK = false
		}
		if r.Costs[samba.RoleOwner].PaillierOps != k || r.Costs[samba.RoleCustomer].PaillierOps != 1 {
			paillierOK = false
		}
		extra := r.Messages - (2*k+2)*steps
		maxExtra = max(maxExtra, extra)
		if extra < 0 || extra > 10*k {
			msgOK = false
		}
	}
	add("Theorem 4: O(NK) AES-GCM operations, 2K encryptions and 2K decryptions per step and iteration", aesOK,
		"every run: AES-GCM operations = 4K·(N − K)·nb_A exactly")
	add("Theorem 4: K Paillier encryptions and one decryption, whatever N", paillierOK,
		"every run: K by the data owners, 1 by the data customer (the controller's K − 1 are homomorphic additions)")
	add("Theorem 4: O(NK) messages, four lists of size K per step and iteration", msgOK,
		"every run: (2K + 2)·(N − K)·nb_A messages (K scores, a batch each way, K bits) and at most %d for the set-up and the sum (threshold 10K)", maxExtra)

	// The hierarchy of the times. Thompson slowest and ε-greedy fastest
	// are orders of means, judged beyond the runs' noise (rankBeyondNoise).
	pursuitLo, pursuitHi := math.Inf(1), math.Inf(-1)
	var slowest, fastest []rank
	var order []string
	for _, k := range ks {
		one := 0.0
		type at2 struct {
			alg string
			t   float64
		}
		var ts []at2
		secure := map[string]experiment.Summary{}
		for _, alg := range algs {
			if alg == "pursuit" {
				continue
			}
			t := at(alg, k, n).Secure.Mean
			one += t / 5
			ts = append(ts, at2{alg, t})
			secure[alg] = at(alg, k, n).Secure
		}
		r := at("pursuit", k, n).Secure.Mean / one
		pursuitLo, pursuitHi = min(pursuitLo, r), max(pursuitHi, r)
		slices.SortFunc(ts, func(a, b at2) int { return cmp.Compare(a.t, b.t) })
		slowest = append(slowest, rankBeyondNoise("thompson", secure, 1))
		fastest = append(fastest, rankBeyondNoise("epsilon_greedy", secure, -1))
		var names []string
		for _, x := range ts {
			names = append(names, x.alg)
		}
		order = append(order, fmt.Sprintf("K = %d: %s", k, strings.Join(names, " < ")))
	}
	add("Pursuit takes about double the time of the others (two iterations a step)", pursuitLo >= 1.5 && pursuitHi <= 2.5,
		"N = %d: Pursuit / the mean of the other five ×%.2f–×%.2f over K (threshold ×1.5–×2.5)", n, pursuitLo, pursuitHi)
	claims = append(claims, rankClaim("Thompson Sampling is the slowest of the one-iteration algorithms", slowest,
		fmt.Sprintf("N = %d, fastest first by mean: %s; %s", n, strings.Join(order, "; "), rankNote(slowest, "slower than"))))
	claims = append(claims, rankClaim("ε-greedy with a fixed ε is the fastest", fastest,
		fmt.Sprintf("the same order; %s", rankNote(fastest, "faster than"))))

	// Rewards: Thompson's mean reward above every other algorithm's,
	// beyond the runs' noise, at every K and N.
	var bests []string
	var bestRanks []rank
	for _, k := range ks {
		for _, b := range sambaBudgets(n, k, kmax) {
			top, topR := "", math.Inf(-1)
			reward := map[string]experiment.Summary{}
			for _, alg := range algs {
				reward[alg] = at(alg, k, b).Reward
				if v := at(alg, k, b).Reward.Mean; v > topR {
					top, topR = alg, v
				}
			}
			bestRanks = append(bestRanks, rankBeyondNoise("thompson", reward, 1))
			bests = append(bests, fmt.Sprintf("K = %d, N = %d: %s (%.0f; Thompson %.0f)", k, b, top, topR, at("thompson", k, b).Reward.Mean))
		}
	}
	claims = append(claims, rankClaim("Thompson Sampling always produces the best cumulative reward", bestRanks,
		fmt.Sprintf("best mean: %s; %s", strings.Join(bests, "; "), rankNote(bestRanks, "above"))))

	// The roles (Figure 8(d)).
	compMost, ctrlLikeOwner, dcNegligible := true, true, true
	ctrlLo, ctrlHi, dcMax := math.Inf(1), math.Inf(-1), 0.0
	compCtrlLo, compCtrlHi := math.Inf(1), math.Inf(-1)
	var compBehind []string
	compShares := map[int][]float64{}
	for _, k := range ks {
		for _, alg := range algs {
			p := at(alg, k, n)
			comp := p.Costs[samba.RoleComp].BusySeconds
			owner := p.Costs[samba.RoleOwner].BusySeconds / float64(k)
			ctrl := p.Costs[samba.RoleController].BusySeconds
			dc := p.Costs[samba.RoleCustomer].BusySeconds
			compCtrlLo, compCtrlHi = min(compCtrlLo, comp/ctrl), max(compCtrlHi, comp/ctrl)
			if comp <= ctrl || comp <= owner || comp <= dc {
				compMost = false
				compBehind = append(compBehind, fmt.Sprintf("%s at K = %d", alg, k))
			}
			r := ctrl / owner
			ctrlLo, ctrlHi = min(ctrlLo, r), max(ctrlHi, r)
			if r < 0.5 || r > 2 {
				ctrlLikeOwner = false
			}
			s := p.share(samba.RoleCustomer, false)
			dcMax = max(dcMax, s)
			if s >= 0.01 {
				dcNegligible = false
			}
			compShares[k] = append(compShares[k], p.share(samba.RoleComp, false))
		}
	}
	behind := "none"
	if len(compBehind) > 0 {
		behind = strings.Join(compBehind, ", ")
	}
	add("Comp is the most time-consuming node", compMost,
		"N = %d: comp's busy time over the controller's ×%.2f–×%.2f, over one data owner's and the data customer's far more; comp not ahead of every other node: %s",
		n, compCtrlLo, compCtrlHi, behind)
	if kmax > kmin {
		maxDiff := 0.0
		for i := range algs {
			maxDiff = max(maxDiff, math.Abs(compShares[kmax][i]-compShares[kmin][i]))
		}
		add("for the same N, Comp's share stays the same whatever K", maxDiff <= 0.05,
			"comp's share of all busy time at K = %d: %s; at K = %d: %s (threshold: within 5 points)",
			kmin, joinPercent(compShares[kmin]), kmax, joinPercent(compShares[kmax]))
	}
	ownersEqual := true
	for _, p := range pts {
		if !p.OwnersEqual {
			ownersEqual = false
		}
	}
	add("each data owner has an equal share", ownersEqual,
		"every run: every data owner sent the same number of messages and bytes (the simulator times a role's parties together, so their busy time is not compared one by one)")
	add("the controller's share is roughly that of one data owner", ctrlLikeOwner,
		"controller / one data owner's busy time ×%.2f–×%.2f (threshold ×0.5–×2)", ctrlLo, ctrlHi)
	add("the data customer's share is negligible", dcNegligible, "at most %.2f %% of all busy time (threshold 1 %%)", 100*dcMax)

	// The paper's absolute time, by the fitted line.
	if len(budgets) >= 2 && kmax == 100 {
		var mins []float64
		for _, alg := range algs {
			if alg == "pursuit" {
				continue
			}
			var xs, ys []float64
			for _, b := range budgets {
				xs = append(xs, float64(b))
				ys = append(ys, at(alg, kmax, b).Secure.Mean)
			}
			slope, _ := linearFit(xs, ys)
			icept := ys[len(ys)-1] - slope*xs[len(xs)-1]
			mins = append(mins, (icept+slope*1e5)/60)
		}
		slices.Sort(mins)
		med := mins[len(mins)/2]
		add("at N = 10⁵ and K = 100 most SAMBA algorithms take around 15 minutes",
			med >= 7.5 && med <= 30,
			"the one-iteration algorithms' lines in N at K = 100, extrapolated to N = 10⁵: median %.2f min (threshold 7.5–30 min); the paper's prototype was Python with the phe library", med)
	}
	return claims
}

// rank is how one algorithm stands against the others at one point of
// the grid, judged beyond the runs' noise (experiment.Compare): first
// when its 95 % interval lies beyond every other's, beaten when some
// other's lies beyond its own; neither when intervals overlap or a point
// has one run.
type rank struct {
	first, beaten bool
	// open names the algorithms it cannot be told from.
	open []string
}

// rankBeyondNoise ranks alg among the summaries of by: first when its
// mean exceeds every other's beyond the noise (dir 1), or falls below
// every other's (dir −1).
func rankBeyondNoise(alg string, by map[string]experiment.Summary, dir int) rank {
	r := rank{first: true}
	for _, other := range slices.Sorted(maps.Keys(by)) {
		if other == alg {
			continue
		}
		switch experiment.Compare(by[alg], by[other]) * dir {
		case 1:
		case -1:
			r.first, r.beaten = false, true
		default:
			r.first = false
			r.open = append(r.open, other)
		}
	}
	return r
}

// rankClaim is the claim that alg is first at every point: it holds when
// it is first everywhere, does not hold when it is beaten somewhere, and
// is not resolved otherwise.
func rankClaim(text string, ranks []rank, note string) experiment.Claim {
	c := experiment.Claim{Text: text, Holds: true, Note: note}
	for _, r := range ranks {
		switch {
		case r.beaten:
			c.Holds, c.Unresolved = false, false
			return c
		case !r.first:
			c.Holds, c.Unresolved = false, true
		}
	}
	return c
}

// rankNote says, for rankClaim's note, at how many points the order is
// resolved by the runs' 95 % intervals.
func rankNote(ranks []rank, how string) string {
	first, beaten := 0, 0
	open := map[string]bool{}
	for _, r := range ranks {
		if r.first {
			first++
		}
		if r.beaten {
			beaten++
		}
		for _, o := range r.open {
			open[o] = true
		}
	}
	note := fmt.Sprintf("%s every other beyond the runs' 95 %% intervals at %d of %d points, beaten at %d", how, first, len(ranks), beaten)
	if len(open) > 0 {
		note += fmt.Sprintf("; not told apart from %s", strings.Join(slices.Sorted(maps.Keys(open)), ", "))
	}
	return note
}

func joinInt(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

func joinInt64(xs []int64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

func joinFloat(xs []float64, prec int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.*f", prec, x))
	}
	return strings.Join(s, ", ")
}

func joinPercent(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.1f %%", 100*x))
	}
	return strings.Join(s, ", ")
}

// line is one algorithm's times against N or K, for the linearity claims.
type line struct {
	alg string
	xs  []float64
	ys  []experiment.Summary
}

// fit is the least-squares line through the means: its slope and R².
func (l line) fit() (slope, r2 float64) {
	means := make([]float64, len(l.ys))
	for i, y := range l.ys {
		means[i] = y.Mean
	}
	return linearFit(l.xs, means)
}

// linearClaim judges "the time is linear" over the algorithms' lines with
// the runs' noise: it holds when every line fits the means with R² ≥ 0.99;
// otherwise it is not resolved when each line that fits worse still passes
// within every point's 95 % interval (the departure is no larger than the
// runs' noise), and does not hold when one does not.
func linearClaim(text string, lines []line, note string) experiment.Claim {
	var worse, beyond []string
	for _, l := range lines {
		if _, r2 := l.fit(); r2 >= 0.99 {
			continue
		}
		worse = append(worse, l.alg)
		if !experiment.WithinNoiseOfLine(l.xs, l.ys) {
			beyond = append(beyond, l.alg)
		}
	}
	c := experiment.Claim{Text: text, Holds: len(worse) == 0, Note: note}
	switch {
	case len(worse) == 0:
	case len(beyond) == 0:
		c.Unresolved = true
		c.Note += fmt.Sprintf("; below 0.99 for %s, whose lines pass within every point's 95 %% interval: a departure within the runs' noise", strings.Join(worse, ", "))
	default:
		c.Note += fmt.Sprintf("; %s off its line beyond a point's 95 %% interval", strings.Join(beyond, ", "))
	}
	return c
}
