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
}

// Family is one protocol family. The daemon and the simulator drive every family
// through this interface and never branch on which one they have.
type Family interface {
	// Name is the family's name, the spec's protocol key.
	Name() string
	// Roles describes the family's roles.
	Roles() []RoleSpec
	// ParseParams decodes and validates the spec's [params] table (strictly:
	// an unknown key is an error naming it) and fills in defaults.
	ParseParams(raw map[string]any) (any, error)
	// DecodeLocal decodes a daemon's local data for role from its config's
	// [local.<family>.<role>] table; table is nil when the config has no such
	// table. An error says what is wrong or missing and names the key it is
	// about, the table's (LocalKey) or one in it; the daemon shows it as it
	// is.
	DecodeLocal(role string, table *LocalTable) (any, error)
	// PrepareSimulation decodes the family's keys of the spec's [simulation]
	// table (the simulator has removed its own: seed, link_latency) and returns
	// the session's assignment — spec's roles when given, or one derived from
	// the table — and every party's local data.
	PrepareSimulation(raw map[string]any, roles Assignment) (Assignment, map[Party]any, error)
	// NewRole builds the state machine of one party.
	NewRole(cfg RoleConfig) (Role, error)
	// Combine turns the parties' reports into the session's result, as shown to
	// the initiator. It validates every report: they come from the network.
	Combine(a Assignment, params any, reports map[Party][]byte) (any, error)
	// Separations lists the pairs of roles that one organization must not
	// play together, from the paper's non-collusion assumptions; nil when
	// the family's guarantees hold whoever plays which role (beyond one
	// organization per party of a role, which CheckAssignment always
	// requires). The family's documentation says why for every pair it
	// allows as well as for those it lists.
	Separations() []Separation
}

// SmallMessages is implemented by a family whose messages are all small:
// far below a transport's flow-control window (yamux's is 256 KiB at first),
// so that no organization ever has that much of another's unread. A daemon
// then steps a received message on the goroutine that read it, saving a hand
// over per message; that goroutine does not read while its sends block, so
// with large messages two organizations that send to each other at once
// would each wait for the other to read, until a write timeout. Such a
// family's roles also keep no part of a message's Body once Step returns
// (they copy what they keep): a daemon that steps in place hands them the
// bytes in its stream's read buffer, which the next frame overwrites.
type SmallMessages interface {
	// SmallMessages reports whether every message of the family is small.
	SmallMessages() bool
}

// MessageDriven is implemented by a family whose roles do nothing on Tick:
// they move only when a message arrives. A daemon then does not tick them, so a
// session of such a family wakes its node only for messages (on a busy
// testnet of a hundred daemons, ten wake-ups a second each add up) and for
// its liveness checks, which also send on progress that no message carried.
type MessageDriven interface {
	// MessageDriven reports whether every role of the family ignores Tick.
	MessageDriven() bool
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
	for _, rs := range f.Roles() {
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
	for _, rs := range f.Roles() {
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

// AssignmentChecker is implemented by a family whose parameters hold only
// with some assignments (a voting threshold that the number of agents must be
// able to exceed) or only in a simulation (a baseline that needs no
// communication, and so could tell no initiator its result), so that such a
// spec is refused before any organization accepts it rather than when the
// roles are built, after every organization has. Registry.Check — what a
// daemon runs on a spec before it proposes it and before it accepts a
// proposal — calls CheckAssignment with simulated false, after the generic
// CheckAssignment and ParseParams; the simulator calls it with simulated
// true and the assignment PrepareSimulation returned, before it builds any
// role. params is what the family's ParseParams returned. Errors name the
// spec key at fault.
type AssignmentChecker interface {
	// CheckAssignment reports why a session of assignment a and params
	// could not run; simulated is set by the simulator only.
	CheckAssignment(a Assignment, params any, simulated bool) error
}

// WireVersioned is implemented by a family whose role messages changed in a
// way that a daemon of an earlier version cannot follow (a new key
// schedule, a new kind of dealer correction). A daemon names its role
// streams with the version, so that two daemons that disagree fail when a
// stream is negotiated, with "protocols not supported" naming it, instead
// of mid-session on messages that do not open.
type WireVersioned interface {
	// WireVersion is the semantic version of the family's role messages.
	WireVersion() string
}

// WireVersion returns f's role message version: its WireVersion, or 1.0.0
// for a family that has never changed them.
func WireVersion(f Family) string {
	if v, ok := f.(WireVersioned); ok {
		return v.WireVersion()
	}
	return "1.0.0"
}

// ResultFormatter is implemented by families that can render their combined
// result (the JSON encoding of what Combine returned) for people; the CLI
// falls back to indented JSON for the others.
type ResultFormatter interface {
	FormatResult(w io.Writer, result []byte) error
}

// Grader is implemented by families that can grade a simulated session
// against the ground truth of its [simulation] table (the true means, say),
// which no participant of a real session knows, or against a plain reference
// run from the same seed. The simulator passes the table without its own
// keys, the seed, the parsed params and the combined result, and reports
// what Grade returns.
type Grader interface {
	Grade(raw map[string]any, seed int64, params any, result any) (any, error)
}

// LocalGrader is a Grader that also reads every party's private result,
// keyed by party (a simulation has them all; a real session never does).
// When a family implements it, the simulator calls GradeLocal instead of
// Grade.
type LocalGrader interface {
	GradeLocal(raw map[string]any, seed int64, params any, result any, local map[string]any) (any, error)
}

// ParamsPreparer is implemented by families whose simulated local data
// depend on the session's parameters (how many steps of a data set, how many
// arms); the simulator then calls PrepareSimulationParams instead of
// PrepareSimulation.
type ParamsPreparer interface {
	PrepareSimulationParams(raw map[string]any, roles Assignment, params any) (Assignment, map[Party]any, error)
}

// Timed is implemented by results that report their speed: the simulator
// calls SetTiming with the wall time spent inside each role's state
// machines, summed over the role's parties.
type Timed interface {
	SetTiming(roleSeconds map[string]float64)
}

// ParseParams is the usual Family.ParseParams: it decodes the spec's
// [params] table strictly over defaults and validates the result.
func ParseParams[P any](raw map[string]any, defaults P, validate func(P) error) (any, error) {
	p := defaults
	if err := DecodeTable("params", raw, &p); err != nil {
		return nil, err
	}
	if err := validate(p); err != nil {
		return nil, err
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

// TopicUser is implemented by families whose roles publish on the session
// topic. The daemon joins the topic only for them, and waits, before it
// starts their roles, until every organization of the session has
// subscribed; the others never touch gossipsub.
type TopicUser interface {
	UsesTopic() bool
}
