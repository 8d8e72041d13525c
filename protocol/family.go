package protocol

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// RoleSpec describes one role of a protocol family.
type RoleSpec struct {
	// Name is the role's name in specs and configs.
	Name string
	// Min and Max bound how many parties may play the role (Max 0: no bound).
	Min, Max int
	// Doc is a one-line description for help text.
	Doc string
	// Learns says, in a sentence for an operator or a compliance officer,
	// what a party of the role learns of the other organizations' data in
	// a session, as the family's documentation and its view tests
	// establish it. docs/security.md's table of what each role learns is
	// generated from it (cmd/internal/families' test), and the console's
	// policy page shows it.
	Learns string
}

// Family is one protocol family. The daemon and the simulator drive every family
// through this interface and never branch on which one they have. What a
// driver needs to know about the family — its roles, wire versions, how its
// messages and roles behave — it describes with data, in Info.
type Family interface {
	// Name is the family's name, the spec's protocol key.
	Name() string
	// Info describes the family (see Info).
	Info() Info
	// ParseParams decodes and validates the spec's [params] table (strictly:
	// an unknown key is an error naming it) and fills in defaults.
	ParseParams(raw map[string]any) (any, error)
	// CheckAssignment reports why a session of assignment a and params
	// (what ParseParams returned) could not run, for a family whose
	// parameters hold only with some assignments (a voting threshold that
	// the number of agents must be able to exceed) or only in a simulation
	// (a baseline that needs no communication, and so could tell no
	// initiator its result); nil for the others. It lets such a spec be
	// refused before any organization accepts it rather than when the
	// roles are built. Registry.Check — what a daemon runs on a spec before
	// it proposes it and before it accepts a proposal — calls it with
	// simulated false, after the generic CheckAssignment and ParseParams;
	// the simulator with simulated true and the assignment
	// PrepareSimulation returned, before it builds any role. Errors name
	// the spec key at fault.
	CheckAssignment(a Assignment, params any, simulated bool) error
	// DecodeLocal decodes a daemon's local data for role from its config's
	// [local.<family>.<role>] table; table is nil when the config has no such
	// table. An error says what is wrong or missing and names the key it is
	// about, the table's (LocalKey) or one in it; the daemon shows it as it
	// is.
	DecodeLocal(role string, table *LocalTable) (any, error)
	// NewRole builds the state machine of one party.
	NewRole(cfg RoleConfig) (Role, error)
	// Combine turns the parties' reports into the session's result, as shown to
	// the initiator. It validates every report: they come from the network.
	Combine(a Assignment, params any, reports map[Party][]byte) (any, error)
	// FormatResult renders a combined result (the JSON encoding of what
	// Combine returned) for people, as the CLI shows it.
	FormatResult(w io.Writer, result []byte) error
}

// Info describes a family with data: what the daemon and the simulator need
// to know to drive it, decided once for both (package protocol/drive).
type Info struct {
	// Roles describes the family's roles.
	Roles []RoleSpec
	// Separations lists the pairs of roles that one organization must not
	// play together, from the paper's non-collusion assumptions; nil when
	// the family's guarantees hold whoever plays which role (beyond one
	// organization per party of a role, which CheckAssignment always
	// requires). The family's documentation says why for every pair it
	// allows as well as for those it lists.
	Separations []Separation
	// WireVersions are the semantic versions of the family's role messages
	// it reads and writes, its current one first, then the earlier ones it
	// still speaks, newest first; nil for a family that has never changed
	// them (1.0.0). A daemon names its role streams with the version, so
	// that two daemons that disagree fail when a stream is negotiated, with
	// "protocols not supported" naming it, instead of mid-session on
	// messages that do not open; and it runs a session at any version
	// both sides speak (see AtWireVersion).
	WireVersions []string
	// AtWireVersion returns the family speaking v, an earlier version of
	// WireVersions (typically the same roles with a version field in their
	// config that selects the old encoding); nil when the family speaks only
	// its current one. A family drops a version only once every
	// organization is known to have upgraded past it.
	AtWireVersion func(v string) Family
	// SmallMessages: every message of the family is small — far below a
	// transport's flow-control window (yamux's is 256 KiB at first), at most
	// drive.MaxSmallMessage bytes — and no role keeps a part of a message's
	// Body once Step returns (it copies what it keeps). A daemon then steps
	// a received message on the goroutine that read it, lending the role
	// its read buffer and saving a hand-over per message; with large
	// messages, two organizations that send to each other at once would
	// each wait for the other to read.
	SmallMessages bool
	// MessageDriven: the family's roles do nothing on Tick; they move only
	// when a message arrives. They are then not ticked, by the daemon or
	// the simulator, so a session wakes its node only for messages (on a
	// busy testnet of a hundred daemons, ten wake-ups a second each add
	// up) and for its liveness checks.
	MessageDriven bool
	// UsesTopic: the family's roles publish on the session topic. The
	// daemon joins the topic only for such a family, and waits, before it
	// starts their roles, until every organization of the session has
	// subscribed; the roles of any other family may not publish.
	UsesTopic bool
}

// Registry holds the protocol families a daemon or simulator knows. It is built
// once by the composition root; there is no global registry.
type Registry struct {
	families map[string]Family
}

// NewRegistry builds a registry of the given families; names must be unique.
func NewRegistry(families ...Family) (*Registry, error) {
	r := &Registry{families: map[string]Family{}}
	for _, f := range families {
		if _, dup := r.families[f.Name()]; dup {
			return nil, fmt.Errorf("protocol family %q registered twice", f.Name())
		}
		if err := checkSeparationRules(f); err != nil {
			return nil, fmt.Errorf("protocol family %s: %w", f.Name(), err)
		}
		r.families[f.Name()] = f
	}
	return r, nil
}

// Names lists the known families, sorted.
func (r *Registry) Names() []string { return slices.Sorted(maps.Keys(r.families)) }

// Lookup returns the family called name, or an error listing the known ones.
func (r *Registry) Lookup(name string) (Family, error) {
	f, ok := r.families[name]
	if !ok {
		return nil, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	return f, nil
}

// RoleSpecOf returns the family's spec of role, or an error naming the known roles.
func RoleSpecOf(f Family, role string) (RoleSpec, error) {
	var names []string
	for _, rs := range f.Info().Roles {
		if rs.Name == role {
			return rs, nil
		}
		names = append(names, rs.Name)
	}
	return RoleSpec{}, fmt.Errorf("protocol %s has no role %q (its roles: %s)", f.Name(), role, strings.Join(names, ", "))
}

// CheckAssignment checks that a assigns every role of f a permitted number of
// distinct, non-empty organizations, names no unknown role and gives no
// organization two roles that f's Separations keep apart (the error is then
// a *SeparationError).
func CheckAssignment(f Family, a Assignment) error {
	for _, role := range slices.Sorted(maps.Keys(a.Roles)) {
		if _, err := RoleSpecOf(f, role); err != nil {
			return fmt.Errorf("roles.%s: %w", role, err)
		}
		seen := map[string]bool{}
		for i, org := range a.Roles[role] {
			if org == "" {
				return fmt.Errorf("roles.%s[%d]: empty name", role, i)
			}
			if seen[org] {
				return fmt.Errorf("roles.%s: %q is listed twice", role, org)
			}
			seen[org] = true
		}
	}
	for _, rs := range f.Info().Roles {
		n := a.Count(rs.Name)
		if n < rs.Min {
			return fmt.Errorf("roles.%s: protocol %s needs at least %d, the spec gives %d", rs.Name, f.Name(), rs.Min, n)
		}
		if rs.Max > 0 && n > rs.Max {
			return fmt.Errorf("roles.%s: protocol %s allows at most %d, the spec gives %d", rs.Name, f.Name(), rs.Max, n)
		}
	}
	return checkSeparations(f, a)
}

// WireVersion returns f's current role message version (Info.WireVersions).
func WireVersion(f Family) string { return WireVersions(f)[0] }

// ParseParams is the usual typed family's ParseParams (see Erased): it
// decodes the spec's [params] table strictly over defaults and validates
// the result.
func ParseParams[P any](raw map[string]any, defaults P, validate func(P) error) (P, error) {
	p := defaults
	if err := DecodeTable("params", raw, &p); err != nil {
		return p, err
	}
	if err := validate(p); err != nil {
		return p, err
	}
	return p, nil
}

// LocalKey is the config key of the table of role's local data in family,
// local.<family>.<role>.
func LocalKey(family, role string) string { return "local." + family + "." + role }

// LocalTable is a role's table in a daemon's config,
// [local.<family>.<role>], as Family.DecodeLocal receives it.
type LocalTable struct {
	// Key is the table's key (LocalKey).
	Key string
	// Raw is the table as the config's TOML decoder found it.
	Raw map[string]any
	// Dir is the directory of the config file. A relative file path in the
	// table is taken from there (Path), as node.data_dir is, and not from
	// the daemon's working directory, which a service manager sets to
	// wherever it likes.
	Dir string
	// Source is the environment the table names for the role (its source
	// key, which the daemon has taken out of Raw): "simulated" — the
	// family's own distributions, decoded from Raw — or "exec", "http" or
	// "replay", which answer the role's queries instead, so that the keys
	// of the simulated distributions are then neither needed nor allowed.
	Source string
}

// Simulated reports whether the table's role takes its outcomes from the
// family's own simulated environment (no source, or "simulated").
func (t *LocalTable) Simulated() bool { return t == nil || t.Source == "" || t.Source == "simulated" }

// Decode decodes the table into v, a pointer to a struct with toml tags, as
// DecodeTable does: strictly, an error naming the key it is about
// ("local.samba.data_owner.bernoulli: want a number, got text "0.5"").
func (t *LocalTable) Decode(v any) error { return DecodeTable(t.Key, t.Raw, v) }

// Path returns file path p of the table: p itself if absolute or if the
// table has no Dir, otherwise p under Dir.
func (t *LocalTable) Path(p string) string {
	if p == "" || t.Dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(t.Dir, p)
}

// LocalChecker is implemented by local data (a value DecodeLocal returned)
// that names something outside the config, such as a data file read when a
// role starts. A daemon calls CheckLocal when it starts, so that a missing
// file stops it then rather than a session of several organizations later.
// Commands that read the config only to reach the daemon do not, so that
// they still work while a file is being replaced. The error names the key.
type LocalChecker interface {
	CheckLocal() error
}

// NoLocalData is Family.DecodeLocal for a role that needs no local data:
// a [local.<family>.<role>] table with keys in it is refused, naming them
// (an empty one is harmless).
func NoLocalData(family, role string, table *LocalTable) (any, error) {
	if table == nil || len(table.Raw) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(table.Raw))
	for k := range table.Raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return nil, fmt.Errorf("%s: role %s of %s needs no local data; remove %s", LocalKey(family, role), role, family, strings.Join(keys, ", "))
}
