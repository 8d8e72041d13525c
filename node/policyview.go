package node

import (
	"maps"
	"slices"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol"
)

// policyView describes what the config in force has this node accept
// (GET /v0/policy): exactly what config.Admit and AdmitName check of a
// proposal — the protocol's [policy] table, its initiators and roles, the
// standing sessions it takes, its max and min limits and the daemon's own
// minimums — with what each role learns (protocol.RoleSpec.Learns).
func (n *Node) policyView() apitype.Policy { return policyOf(n.config(), n.reg) }

// policyOf is policyView of the config cfg, with the families of reg.
func policyOf(cfg *config.Config, reg *protocol.Registry) apitype.Policy {
	out := apitype.Policy{Node: cfg.Node.Name, Protocols: []apitype.ProtocolPolicy{}}
	for _, name := range reg.Names() {
		f, err := reg.Lookup(name)
		if err != nil {
			continue // Names lists only what Lookup finds
		}
		pol, enabled := cfg.Policy[name]
		pp := apitype.ProtocolPolicy{Protocol: name, Enabled: enabled, Roles: []apitype.RolePolicy{}}
		if enabled {
			pp.Initiators = pol.Initiators
			pp.AnyStanding = pol.Sessions == nil || slices.Contains(pol.Sessions, "*")
			if !pp.AnyStanding {
				pp.Standing = pol.Sessions
			}
		}
		for _, r := range f.Info().Roles {
			rp := apitype.RolePolicy{Role: r.Name, Doc: r.Doc, Learns: r.Learns, Environment: string(environment.SourceSimulated),
				Accepted: enabled && (slices.Contains(pol.Roles, "*") || slices.Contains(pol.Roles, r.Name))}
			if env, ok := cfg.Environments[name][r.Name]; ok && env.Source != "" {
				rp.Environment = string(env.Source)
			}
			if rp.Accepted {
				if _, ok := cfg.LocalData[name][r.Name]; !ok {
					// What Admit would answer a proposal of this role.
					if _, err := f.DecodeLocal(r.Name, nil); err != nil {
						rp.Missing = err.Error()
					}
				}
			}
			pp.Roles = append(pp.Roles, rp)
		}
		if enabled {
			pp.Limits = policyLimits(pol, f.ParseParams)
		}
		out.Protocols = append(out.Protocols, pp)
	}
	return out
}

// policyLimits lists the limits of pol and, for the keys pol's min table
// leaves out, the daemon's own minimums of the family whose ParseParams is
// parse, sorted by key then bound.
func policyLimits(pol config.PolicyConfig, parse func(map[string]any) (any, error)) []apitype.PolicyLimit {
	defaults, err := parse(nil)
	if err != nil {
		defaults = nil // figures are then described as parameters
	}
	var out []apitype.PolicyLimit
	for _, t := range []struct {
		bound  string
		limits map[string]float64
	}{{"max", pol.Max}, {"min", pol.Min}} {
		for _, key := range slices.Sorted(maps.Keys(t.limits)) {
			out = append(out, apitype.PolicyLimit{Key: key, Bound: t.bound, Value: t.limits[key], Figure: config.FigureDoc(defaults, key)})
		}
	}
	mins := config.DefaultMins(defaults)
	for _, key := range slices.Sorted(maps.Keys(mins)) {
		if _, set := pol.Min[key]; !set {
			out = append(out, apitype.PolicyLimit{Key: key, Bound: "min", Value: mins[key], Default: true, Figure: config.FigureDoc(defaults, key)})
		}
	}
	slices.SortStableFunc(out, func(a, b apitype.PolicyLimit) int {
		if a.Key != b.Key {
			if a.Key < b.Key {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}
