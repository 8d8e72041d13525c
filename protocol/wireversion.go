package protocol

import (
	"slices"
	"strconv"
	"strings"
)

// WireVersions returns the versions of role messages f speaks, its current
// one first (Info.WireVersions; 1.0.0 for a family that has never changed
// them).
func WireVersions(f Family) []string {
	if vs := f.Info().WireVersions; len(vs) > 0 {
		return vs
	}
	return []string{"1.0.0"}
}

// AtWireVersion returns f speaking version v, and false if f does not
// speak v.
func AtWireVersion(f Family, v string) (Family, bool) {
	info := f.Info()
	vs := info.WireVersions
	if len(vs) == 0 {
		vs = []string{"1.0.0"}
	}
	if v == vs[0] {
		return f, true
	}
	if info.AtWireVersion == nil || !slices.Contains(vs[1:], v) {
		return nil, false
	}
	return info.AtWireVersion(v), true
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
