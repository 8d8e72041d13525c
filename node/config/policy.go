package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/bandit-node/bandit-node/protocol"
)

// Admit decides whether this node plays roles in a proposed session of family
// f with parsed params, proposed by the address-book peer initiator (or by
// this node itself when self is true). It returns the local data of each role
// or the reason to decline, phrased for the initiator's operator.
func (c *Config) Admit(f protocol.Family, params any, initiator string, self bool, roles []string) (map[string]any, error) {
	pol, ok := c.Policy[f.Name()]
	if !ok {
		return nil, fmt.Errorf("protocol %s is not enabled on %s (its config has no [policy.%s])", f.Name(), c.Node.Name, f.Name())
	}
	if !self && !slices.Contains(pol.Initiators, "*") && !slices.Contains(pol.Initiators, initiator) {
		return nil, fmt.Errorf("%s does not accept %s sessions initiated by %s (policy.%s.initiators)", c.Node.Name, f.Name(), initiator, f.Name())
	}
	for _, r := range roles {
		if !slices.Contains(pol.Roles, "*") && !slices.Contains(pol.Roles, r) {
			return nil, fmt.Errorf("%s does not play role %s of %s (policy.%s.roles)", c.Node.Name, r, f.Name(), f.Name())
		}
	}
	for _, t := range pol.limitTables() {
		for _, key := range slices.Sorted(maps.Keys(t.limits)) {
			v, doc, ok := policyValue(params, key)
			if !ok {
				return nil, fmt.Errorf("%s: policy.%s.%s.%s names no numeric parameter or figure of %s", c.Node.Name, f.Name(), t.name, key, f.Name())
			}
			if !t.within(v, t.limits[key]) {
				return nil, fmt.Errorf("%s %s %s's %s of %v (policy.%s.%s.%s)", describeValue(key, v, doc), t.breach, c.Node.Name, t.what, t.limits[key], f.Name(), t.name, key)
			}
		}
	}
	if err := checkDefaultMins(c.Node.Name, f.Name(), pol, params); err != nil {
		return nil, err
	}
	local := map[string]any{}
	for _, r := range roles {
		if v, ok := c.LocalData[f.Name()][r]; ok {
			local[r] = v
			continue
		}
		v, err := f.DecodeLocal(r, nil)
		if err != nil {
			return nil, fmt.Errorf("%s has no local data for role %s of %s: %w", c.Node.Name, r, f.Name(), err)
		}
		local[r] = v
	}
	return local, nil
}

// AdmitName decides whether this node takes part in a run of the standing
// session name ("" for a session started by hand) of family f, proposed by
// initiator: policy.<family>.sessions lists the names it accepts ("*" for
// any, "" for sessions started by hand); without it, any is accepted.
func (c *Config) AdmitName(f protocol.Family, initiator, name string) error {
	pol := c.Policy[f.Name()]
	if pol.Sessions == nil || slices.Contains(pol.Sessions, "*") || slices.Contains(pol.Sessions, name) {
		return nil
	}
	if name == "" {
		return fmt.Errorf("%s accepts only the standing %s sessions it lists, and this one was started by hand on %s (policy.%s.sessions)",
			c.Node.Name, f.Name(), initiator, f.Name())
	}
	return fmt.Errorf("%s does not accept the standing session %q of %s (policy.%s.sessions)", c.Node.Name, name, initiator, f.Name())
}

// numericParam returns what a policy limit named key applies to in
// params: a public figure computed from them (policyValue), or the numeric
// parameter whose toml tag is key, as a float64 — so a policy limit applies
// to the value in effect, defaults included. The config's validation
// refuses a limit for which it finds nothing.
func numericParam(params any, key string) (float64, bool) {
	v, _, ok := policyValue(params, key)
	return v, ok
}

// paramField finds the field of a params struct whose toml tag is key and
// returns its value as a float64.
func paramField(params any, key string) (float64, bool) {
	v := reflect.ValueOf(params)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0, false
	}
	t := v.Type()
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if tag != key {
			continue
		}
		f := v.Field(i)
		switch {
		case f.CanInt():
			return float64(f.Int()), true
		case f.CanUint():
			return float64(f.Uint()), true
		case f.CanFloat():
			return f.Float(), true
		}
		return 0, false
	}
	return 0, false
}

// limitTable is one of a policy's tables of limits on numeric parameters.
type limitTable struct {
	name   string // its TOML table: "max" or "min"
	limits map[string]float64
	// within reports whether a value keeps to a limit; false for NaN.
	within func(v, limit float64) bool
	// breach and what phrase a value that does not: "exceeds … limit".
	breach, what string
}

// limitTables returns the policy's upper limits, then its lower ones.
func (p PolicyConfig) limitTables() []limitTable {
	return []limitTable{
		{"max", p.Max, func(v, limit float64) bool { return v <= limit }, "exceeds", "limit"},
		{"min", p.Min, func(v, limit float64) bool { return v >= limit }, "is under", "minimum"},
	}
}

// CheckEnvironments checks, at admission, the environment of each role in
// roles that this node plays in a session of family f with parsed params
// and assignment a, when it is not the family's simulated one: an exec
// program must exist and be executable, a replay file must be readable,
// well formed, as wide as the family's answers and, replayed in order, as
// long as the session's steps (protocol.Environmental.EnvironmentShape; a
// family without environments asks for any width and length). A session that
// would fail at its first query, or when its file runs out, is declined
// before it starts, with a reason naming the organization, the key and
// the file or program.
func (c *Config) CheckEnvironments(f protocol.Family, params any, a protocol.Assignment, roles []string) error {
	for _, r := range roles {
		env := c.Environments[f.Name()][r]
		if env.Simulated() {
			continue
		}
		var columns int
		var steps int64
		if sh, ok := f.(protocol.Environmental); ok {
			columns, steps = sh.EnvironmentShape(r, params, a)
		}
		if err := env.Check(columns, steps); err != nil {
			return fmt.Errorf("%s cannot play %s of %s: %s (source = %q): %w", c.Node.Name, r, f.Name(), protocol.LocalKey(f.Name(), r), env.Source, err)
		}
	}
	return nil
}
