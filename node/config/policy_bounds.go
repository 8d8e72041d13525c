package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// policyFigurer is implemented by a family's parsed parameters that have
// public figures computed from them — a privacy total, the width of a
// range — which a policy's [policy.<family>.max] and .min tables bound as
// they bound a parameter (pfcb: epsilon_total; bai: reward_range). A
// figure of the same name as a parameter takes its place.
type policyFigurer interface {
	// PolicyFigures returns the figures by name.
	PolicyFigures() map[string]float64
	// PolicyFigureDoc describes a figure for a decline reason.
	PolicyFigureDoc(key string) string
}

// policyDefaultMiner is implemented by a family's parsed parameters that a
// daemon bounds from below even when its policy does not say so (samba:
// paillier_bits ≥ 2048): safe defaults for parameters that weaken a
// guarantee, which only an explicit [policy.<family>.min] entry lowers.
type policyDefaultMiner interface {
	PolicyDefaultMin() map[string]float64
}

// policyValue returns what a policy limit named key applies to in params:
// a figure of params, or its numeric parameter key. doc describes a
// figure; it is "" for a parameter.
func policyValue(params any, key string) (v float64, doc string, ok bool) {
	if f, isF := params.(policyFigurer); isF {
		if v, ok := f.PolicyFigures()[key]; ok {
			return v, f.PolicyFigureDoc(key), true
		}
	}
	v, ok = paramField(params, key)
	return v, "", ok
}

// describeValue names the value a limit applies to in a decline reason:
// "params.key = v" for a parameter, "key = v (what it is)" for a figure.
// Both are public: they are computed from the session's spec.
func describeValue(key string, v float64, doc string) string {
	if doc == "" {
		return fmt.Sprintf("params.%s = %v", key, v)
	}
	return fmt.Sprintf("%s = %s (%s)", key, formatFigure(v), doc)
}

// formatFigure writes a computed figure to four significant digits.
func formatFigure(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// checkDefaultMins declines a session of family fam whose params fall
// below a lower bound the family sets for daemons (policyDefaultMiner)
// and that the policy pol does not set itself: a policy without
// [policy.samba.min] paillier_bits — one written by init --policy-open,
// or by hand without the key — accepts no Paillier modulus under 2048
// bits. The reason names both numbers and the key that would allow less.
func checkDefaultMins(node, fam string, pol PolicyConfig, params any) error {
	d, ok := params.(policyDefaultMiner)
	if !ok {
		return nil
	}
	mins := d.PolicyDefaultMin()
	for _, key := range slices.Sorted(maps.Keys(mins)) {
		if _, set := pol.Min[key]; set {
			continue // the operator's own minimum, checked with the others
		}
		v, doc, ok := policyValue(params, key)
		if !ok || v >= mins[key] {
			continue
		}
		return fmt.Errorf("%s is under %s's minimum of %v (policy.%s.min.%s is not set, and a daemon accepts no less unless its policy says so)",
			describeValue(key, v, doc), node, mins[key], fam, key)
	}
	return nil
}

// PolicyFiguresText lists the public figures of params ("epsilon_total =
// 0.8455, …") for the log line of an accepted session, so that the
// operator sees what the session spends; "" when it has none.
func PolicyFiguresText(params any) string {
	f, ok := params.(policyFigurer)
	if !ok {
		return ""
	}
	fig := f.PolicyFigures()
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(fig)) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = %s", key, formatFigure(fig[key]))
	}
	return b.String()
}

// DefaultMins returns the lower bounds a daemon applies to the parameters
// of a family whose parsed params are params when its policy does not set
// the key itself (samba: paillier_bits ≥ 2048); nil if the family has none.
func DefaultMins(params any) map[string]float64 {
	if d, ok := params.(policyDefaultMiner); ok {
		return d.PolicyDefaultMin()
	}
	return nil
}

// FigureDoc describes the public figure key of params ("the session's total
// ε for each published value, …"), which a policy limit bounds; "" when key
// is a parameter rather than a figure.
func FigureDoc(params any, key string) string {
	_, doc, _ := policyValue(params, key)
	return doc
}
