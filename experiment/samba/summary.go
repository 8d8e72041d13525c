package samba

import (
	"math"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol/samba"
)

// sambaKey names one point of the SAMBA grid.
type sambaKey struct {
	Algorithm string
	K         int
	Budget    int64
}

// sambaPoint is one point's runs summarised.
type sambaPoint struct {
	sambaKey
	Runs, Exact            int
	Reward, StandardReward experiment.Summary
	// Secure and Standard are the seconds of a SAMBA session and of a run
	// of the standard algorithm; Overhead is the ratio of their means.
	Secure, Standard experiment.Summary
	// Steps is the seconds of the session's steps: Secure without its
	// set-up (Session.SetupSeconds).
	Steps    experiment.Summary
	Overhead float64
	// Costs are the per-role costs, means over the runs.
	Costs map[string]samba.RoleCost
	// OwnersEqual: in every run every data owner sent as many messages
	// and bytes as every other.
	OwnersEqual bool
}

// summarizeSAMBA reduces the runs to their points.
func summarizeSAMBA(runs []Session) map[sambaKey]sambaPoint {
	type acc struct {
		rewards, standard, secure, steps, std []float64
		exact                                 int
		costs                                 map[string]samba.RoleCost
		busy                                  map[string]float64
		equal                                 bool
	}
	by := map[sambaKey]*acc{}
	for _, r := range runs {
		k := sambaKey{r.Algorithm, r.K, r.Budget}
		a := by[k]
		if a == nil {
			a = &acc{costs: map[string]samba.RoleCost{}, busy: map[string]float64{}, equal: true}
			by[k] = a
		}
		a.rewards = append(a.rewards, float64(r.Reward))
		a.standard = append(a.standard, float64(r.StandardReward))
		a.secure = append(a.secure, r.SecureSeconds)
		a.steps = append(a.steps, r.SecureSeconds-r.SetupSeconds)
		a.std = append(a.std, r.StandardSeconds)
		if r.Exact {
			a.exact++
		}
		if r.OwnerMessages[0] != r.OwnerMessages[1] || r.OwnerBytes[0] != r.OwnerBytes[1] {
			a.equal = false
		}
		for role, c := range r.Costs {
			s := a.costs[role]
			s.Messages += c.Messages
			s.Bytes += c.Bytes
			s.AESOps += c.AESOps
			s.PaillierOps += c.PaillierOps
			a.costs[role] = s
			a.busy[role] += c.BusySeconds
		}
	}
	out := make(map[sambaKey]sambaPoint, len(by))
	for k, a := range by {
		n := int64(len(a.rewards))
		p := sambaPoint{sambaKey: k, Runs: int(n), Exact: a.exact, Reward: experiment.Summarize(a.rewards), StandardReward: experiment.Summarize(a.standard),
			Secure: experiment.Summarize(a.secure), Steps: experiment.Summarize(a.steps), Standard: experiment.Summarize(a.std), Costs: map[string]samba.RoleCost{}, OwnersEqual: a.equal}
		p.Overhead = p.Secure.Mean / p.Standard.Mean
		for role, c := range a.costs {
			p.Costs[role] = samba.RoleCost{Messages: c.Messages / n, Bytes: c.Bytes / n, AESOps: c.AESOps / n,
				PaillierOps: c.PaillierOps / n, BusySeconds: a.busy[role] / float64(n)}
		}
		out[k] = p
	}
	return out
}

// sambaRoles are the roles of the breakdown, in the paper's Figure 5's
// order.
func sambaRoles() []string {
	return []string{samba.RoleComp, samba.RoleController, samba.RoleOwner, samba.RoleCustomer}
}

// busyTotal is the busy time of every party of the point.
func (p sambaPoint) busyTotal() float64 {
	t := 0.0
	for _, role := range sambaRoles() { // in a fixed order: the same sum in every run
		t += p.Costs[role].BusySeconds
	}
	return t
}

// share is role's share of the point's busy time; for the data owners,
// with perOwner, one data owner's.
func (p sambaPoint) share(role string, perOwner bool) float64 {
	b := p.Costs[role].BusySeconds
	if perOwner {
		b /= float64(p.K)
	}
	return b / p.busyTotal()
}

// linearFit fits y = a + b·x by least squares and returns b and R².
func linearFit(xs, ys []float64) (slope, r2 float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= n
	my /= n
	var sxx, sxy, syy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0, math.NaN()
	}
	slope = sxy / sxx
	return slope, sxy * sxy / (sxx * syy)
}
