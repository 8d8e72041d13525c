package protocol

import (
	"strconv"
	"strings"
)

// MultiWireVersioned is implemented by a family that still speaks earlier
// versions of its role messages besides its current one, so that a daemon
// upgraded before its peers keeps running sessions with them. A daemon
// accepts a proposal at any version its family lists, runs that session's
// roles as AtWireVersion returns them, and serves a role stream per
// version (/bandit/<name>/<version>).
//
// A family that bumps its WireVersion keeps the previous one readable by
// listing it here and returning, for it, a family whose roles write and
// read the previous messages (typically the same roles with a version
// field in their Config that selects the old encoding); it drops a version
// only once every organization is known to have upgraded past it. mpccb
// does (1.2.0, and 1.1.0 for daemons not yet upgraded).
type MultiWireVersioned interface {
	WireVersioned
	// WireVersions lists the versions of role messages the family reads
	// and writes: WireVersion first, then the earlier ones it still
	// speaks, newest first.
	WireVersions() []string
	// AtWireVersion returns the family speaking version v, one of
	// WireVersions: its WireVersion is v and its roles speak v.
	AtWireVersion(v string) Family
}

// WireVersions returns the versions of role messages f speaks, its current
// one first: MultiWireVersioned's list, or just WireVersion(f).
func WireVersions(f Family) []string {
	if m, ok := f.(MultiWireVersioned); ok {
		if vs := m.WireVersions(); len(vs) > 0 {
			return vs
		}
	}
	return []string{WireVersion(f)}
}

// AtWireVersion returns f speaking version v, and false if f does not
// speak v.
func AtWireVersion(f Family, v string) (Family, bool) {
	if v == WireVersion(f) {
		return f, true
	}
	m, ok := f.(MultiWireVersioned)
	if !ok {
		return nil, false
	}
	for _, w := range m.WireVersions() {
		if w == v {
			return m.AtWireVersion(v), true
		}
	}
	return nil, false
}

// CompareVersions compares two dotted versions ("1.1.0") number by number,
// a missing number counting as 0: -1 if a is older than b, 0 if they are
// equal, +1 if a is newer. A part that is not a number compares as text
// after every number.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		x, y := "0", "0"
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		xn, xerr := strconv.ParseUint(x, 10, 64)
		yn, yerr := strconv.ParseUint(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case xerr == nil:
			return -1
		case yerr == nil:
			return 1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return 0
}
