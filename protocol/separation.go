package protocol

import (
	"fmt"
	"strings"
)

// Separation is a pair of roles that one organization must not play in the
// same session, because the papers' privacy arguments assume the two do not
// collude, and an organization playing both colludes with itself: it would
// hold together what the protocol keeps apart (a key and the ciphertexts it
// opens, a mask and the values it hides).
//
// Every participant checks a proposal's assignment against its family's
// separations before it accepts (Registry.Check), and the simulator checks
// its assignment before it builds a role, so that a session that would void
// a privacy guarantee never starts, whoever proposes it.
type Separation struct {
	// A and B name the two roles; the rule is symmetric. Two parties of one
	// role are always separated (CheckAssignment refuses an organization
	// listed twice in a role), so A and B differ.
	A, B string
	// Why says what the organization playing both would learn, for the
	// operator who reads the decline: "the controller would open every data
	// owner's score".
	Why string
	// Applies, when set, limits the rule to the sessions for which it
	// returns true (the assignment, before any role is built); nil applies
	// it to every session.
	Applies func(a Assignment) bool
}

// SeparationError is the error CheckAssignment returns for an assignment
// that gives two separated parties to one organization. A daemon that knows
// the organization by another name (an assignment of peer IDs) can rewrite
// Org before it shows the error.
type SeparationError struct {
	// Family is the protocol family's name.
	Family string
	// A and B are the two parties, as the assignment lists them.
	A, B Party
	// Org is the organization that plays both.
	Org string
	// Why is the separation's reason.
	Why string
	// single lists the roles that have at most one party, which the error
	// names without an index.
	single map[string]bool
}

// Error formats the refusal as "samba: controller and data_owner[3] are both
// "globex": the controller would open every data owner's score".
func (e *SeparationError) Error() string {
	return fmt.Sprintf("%s: %s and %s are both %q: %s", e.Family, e.partyName(e.A), e.partyName(e.B), e.Org, e.Why)
}

func (e *SeparationError) partyName(p Party) string {
	if e.single[p.Role] {
		return p.Role
	}
	return p.String()
}

// checkSeparations refuses an assignment in which one organization plays two
// parties that one of f's separations keeps apart. Parties are visited in
// Assignment.Parties order, so the error names the same pair on every
// participant.
func checkSeparations(f Family, a Assignment) error {
	seps := f.Info().Separations
	if len(seps) == 0 {
		return nil
	}
	single := map[string]bool{}
	for _, rs := range f.Info().Roles {
		single[rs.Name] = rs.Max == 1
	}
	for _, org := range a.Orgs() {
		mine := a.PartiesOf(org)
		for i, p := range mine {
			for _, q := range mine[i+1:] {
				for _, s := range seps {
					if !s.separates(p.Role, q.Role) || (s.Applies != nil && !s.Applies(a)) {
						continue
					}
					return &SeparationError{Family: f.Name(), A: p, B: q, Org: org, Why: s.Why, single: single}
				}
			}
		}
	}
	return nil
}

// separates reports whether the rule keeps roles r and q apart.
func (s Separation) separates(r, q string) bool {
	return (s.A == r && s.B == q) || (s.A == q && s.B == r)
}

// checkSeparationRules checks a family's own table: both roles exist, they
// differ, a rule is not listed twice and every rule says why.
func checkSeparationRules(f Family) error {
	seen := map[[2]string]bool{}
	for i, s := range f.Info().Separations {
		for _, r := range []string{s.A, s.B} {
			if _, err := RoleSpecOf(f, r); err != nil {
				return fmt.Errorf("separation %d: %w", i, err)
			}
		}
		if s.A == s.B {
			return fmt.Errorf("separation %d: roles %s and %s are the same; two parties of one role are always separated", i, s.A, s.B)
		}
		if strings.TrimSpace(s.Why) == "" {
			return fmt.Errorf("separation %d (%s, %s): no reason given", i, s.A, s.B)
		}
		key := [2]string{min(s.A, s.B), max(s.A, s.B)}
		if seen[key] {
			return fmt.Errorf("separation %d: %s and %s are listed twice", i, s.A, s.B)
		}
		seen[key] = true
	}
	return nil
}
