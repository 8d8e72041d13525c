package protocol

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Party names one role instance in a session: the role and the index of this
// instance among those who play it, in the order the spec lists them.
type Party struct {
	Role  string
	Index int
}

// String formats the party as "role[index]", the form used in logs and errors.
func (p Party) String() string {
	return p.Role + "[" + strconv.Itoa(p.Index) + "]"
}

// ParseParty parses the "role[index]" form produced by String.
func ParseParty(s string) (Party, error) {
	open := strings.IndexByte(s, '[')
	if open <= 0 || !strings.HasSuffix(s, "]") {
		return Party{}, fmt.Errorf("party %q: want role[index]", s)
	}
	idx, err := strconv.Atoi(s[open+1 : len(s)-1])
	if err != nil || idx < 0 {
		return Party{}, fmt.Errorf("party %q: index is not a non-negative integer", s)
	}
	return Party{Role: s[:open], Index: idx}, nil
}

// Assignment maps every party of a session to the organization that plays it.
// The organization is an opaque identifier: an address-book name in a spec, a
// peer ID inside the daemon, a label in the simulator.
type Assignment struct {
	// Roles lists, for each role name, the organizations playing it, by index.
	Roles map[string][]string
}

// Parties lists every party in a stable order: roles sorted by name, then by index.
func (a Assignment) Parties() []Party {
	var out []Party
	for _, role := range slices.Sorted(maps.Keys(a.Roles)) {
		for i := range a.Roles[role] {
			out = append(out, Party{Role: role, Index: i})
		}
	}
	return out
}

// Count returns how many parties play role.
func (a Assignment) Count(role string) int { return len(a.Roles[role]) }

// Has reports whether p is a party of the session.
func (a Assignment) Has(p Party) bool {
	return p.Index >= 0 && p.Index < len(a.Roles[p.Role])
}

// Org returns the organization playing p, or "" if p is not a party.
func (a Assignment) Org(p Party) string {
	if !a.Has(p) {
		return ""
	}
	return a.Roles[p.Role][p.Index]
}

// PartiesOf lists the parties org plays, in Parties order.
func (a Assignment) PartiesOf(org string) []Party {
	var out []Party
	for _, p := range a.Parties() {
		if a.Org(p) == org {
			out = append(out, p)
		}
	}
	return out
}

// Orgs lists the distinct organizations of the session, sorted.
func (a Assignment) Orgs() []string {
	seen := map[string]bool{}
	var out []string
	for _, names := range a.Roles {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}
