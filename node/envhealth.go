package node

import (
	"maps"
	"slices"
	"strings"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/protocol"
)

// environmentHealth lists the environments of this organization's own that
// the config in force sets up, each with how it fared in the newest
// session record that used it (its parties' EnvironmentUse: an exec
// program's restarts and last stderr line, a starved role's warning). It
// reads the records only when the config sets up such an environment.
func (n *Node) environmentHealth() []apitype.EnvironmentHealth {
	cfg := n.config()
	var out []apitype.EnvironmentHealth
	for _, fam := range slices.Sorted(maps.Keys(cfg.Environments)) {
		for _, role := range slices.Sorted(maps.Keys(cfg.Environments[fam])) {
			if env := cfg.Environments[fam][role]; !env.Simulated() {
				out = append(out, apitype.EnvironmentHealth{Key: protocol.LocalKey(fam, role), Source: string(env.Source)})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	recs, _ := n.store.List() // newest first; an unreadable record is skipped (Sessions logs it)
	for i := range out {
		fam, role, _ := strings.Cut(strings.TrimPrefix(out[i].Key, "local."), ".")
		for _, rec := range recs {
			if rec.Session.Protocol != fam || rec.Session.Finished == nil {
				continue
			}
			found := false
			for party, u := range rec.Session.Environments {
				if !strings.HasPrefix(party, role+"[") {
					continue
				}
				found = true
				out[i].Restarts += u.Restarts
				if out[i].LastError == "" {
					out[i].LastError = u.LastError
				}
				if out[i].Warning == "" {
					out[i].Warning = u.Warning
				}
			}
			if found {
				out[i].Session, out[i].Finished = rec.Session.ID, rec.Session.Finished
				break
			}
		}
	}
	return out
}
