package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// MaxSpecSize bounds a spec document, from a file or from the network.
const MaxSpecSize = 256 << 10

// MaxSpecNesting bounds how deeply arrays and inline tables may nest in a
// spec. The TOML decoder's cost grows faster than linearly with nesting (a
// 40 KB document nested 10,000 deep takes seconds and gigabytes), and a spec
// can arrive from any address-book peer, so depth is checked before parsing.
const MaxSpecNesting = 16

// Spec is a session spec: which protocol, who plays which role, the public
// parameters and, for the simulator only, what would be each daemon's local data.
// It never holds anybody's private data.
type Spec struct {
	// Protocol names the protocol family.
	Protocol string
	// Roles maps role names to the address-book names playing them.
	Roles Assignment
	// Params is the raw [params] table; the family decodes it.
	Params map[string]any
	// Simulation is the raw [simulation] table, read only by the simulator.
	Simulation map[string]any
}

// specFile is the TOML shape of a spec.
type specFile struct {
	Protocol   string         `toml:"protocol"`
	Roles      map[string]any `toml:"roles"`
	Params     map[string]any `toml:"params"`
	Simulation map[string]any `toml:"simulation"`
}

// ParseSpec decodes a spec document. name (a file name, or "spec") prefixes
// every error. Decoding is strict: an unknown top-level key is an error.
func ParseSpec(name string, data []byte) (*Spec, error) {
	if len(data) > MaxSpecSize {
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d-byte limit for a spec", name, len(data), MaxSpecSize)
	}
	if err := checkNesting(data, MaxSpecNesting); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f specFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := undecodedError(md, "", rawSections...); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Protocol == "" {
		return nil, fmt.Errorf("%s: %w", name, keyError(KeyMissing, "protocol", errors.New("missing key protocol")))
	}
	s := &Spec{
		Protocol:   f.Protocol,
		Roles:      Assignment{Roles: map[string][]string{}},
		Params:     f.Params,
		Simulation: f.Simulation,
	}
	if s.Params == nil {
		s.Params = map[string]any{}
	}
	if s.Simulation == nil {
		s.Simulation = map[string]any{}
	}
	for _, role := range slices.Sorted(maps.Keys(f.Roles)) {
		switch v := f.Roles[role].(type) {
		case string:
			s.Roles.Roles[role] = []string{v}
		case []any:
			names := make([]string, 0, len(v))
			for i, x := range v {
				n, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("%s: roles.%s[%d]: want an address-book name (text), got %s", name, role, i, DescribeValue(x))
				}
				names = append(names, n)
			}
			s.Roles.Roles[role] = names
		default:
			return nil, fmt.Errorf("%s: roles.%s: want a name or a list of names, got %s", name, role, DescribeValue(v))
		}
	}
	return s, nil
}

// Encode renders the spec as TOML, without its simulation table. It is what an
// initiator proposes; ParseSpec reads it back.
func (s *Spec) Encode() ([]byte, error) {
	roles := map[string][]string{}
	for r, names := range s.Roles.Roles {
		roles[r] = names
	}
	doc := struct {
		Protocol string              `toml:"protocol"`
		Roles    map[string][]string `toml:"roles"`
		Params   map[string]any      `toml:"params"`
	}{s.Protocol, roles, s.Params}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding spec: %w", err)
	}
	return buf.Bytes(), nil
}

// CheckedSpec is a spec of a real session that Registry.CheckSpec accepted,
// with what the check produced: its family and its parsed parameters. An
// organization parses and checks a spec once — the initiator's daemon when
// its operator submits it, a participant when it examines the proposal, a
// daemon when it loads a standing session — and carries this value to the
// proposal, the acceptance and the session. The spec's text stays the wire
// format and what records keep.
type CheckedSpec struct {
	// Spec is the parsed spec.
	Spec *Spec
	// Family is the spec's protocol family.
	Family Family
	// Params are the spec's parameters as Family.ParseParams returned them.
	Params any
}

// CheckSpec is Check returning the spec with its family and parameters, the
// value a daemon carries from then on.
func (r *Registry) CheckSpec(s *Spec) (*CheckedSpec, error) {
	f, params, err := r.Check(s)
	if err != nil {
		return nil, err
	}
	return &CheckedSpec{Spec: s, Family: f, Params: params}, nil
}

// Check validates the spec of a real session (not a simulation) against the
// registry: the protocol is known, the roles and their counts fit the
// family, the parameters decode, and, for a family that is an
// CheckAssignment, the parameters hold with these roles in a real session.
// It returns the family and the parsed parameters. A daemon checks a spec
// with it before proposing it and before accepting a proposal.
func (r *Registry) Check(s *Spec) (Family, any, error) {
	f, err := r.Lookup(s.Protocol)
	if err != nil {
		return nil, nil, keyError(KeyProtocol, "protocol", fmt.Errorf("protocol: %w", err))
	}
	if err := CheckAssignment(f, s.Roles); err != nil {
		return nil, nil, err
	}
	params, err := f.ParseParams(s.Params)
	if err != nil {
		return nil, nil, AsKeyError(err)
	}
	if err := f.CheckAssignment(s.Roles, params, false); err != nil {
		return nil, nil, AsKeyError(err)
	}
	return f, params, nil
}

// rawSections are the spec's tables decoded whole into maps, whose keys
// their readers check (the family, the simulator).
var rawSections = []string{"roles", "params", "simulation"}

// undecodedError reports the keys the decoder found no place for, but for
// those inside the tables raw names: those are decoded whole, into maps.
// (BurntSushi/toml v1.6.0 reports a table two levels inside a map —
// [simulation.local.data_owner] — and its keys as undecoded although the
// map holds them.)
func undecodedError(md toml.MetaData, section string, raw ...string) error {
	var keys []string
	for _, k := range md.Undecoded() {
		if len(k) > 1 && slices.Contains(raw, k[0]) {
			continue
		}
		key := k.String()
		if section != "" {
			key = section + "." + key
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil
	}
	if len(keys) == 1 {
		return keyError(KeyUnknown, keys[0], fmt.Errorf("unknown key %s", keys[0]))
	}
	return keyError(KeyUnknown, keys[0], fmt.Errorf("unknown keys %s", strings.Join(keys, ", ")))
}

// checkNesting rejects a TOML document whose arrays and inline tables nest
// deeper than max. It skips comments and the four kinds of strings, so
// brackets inside them do not count.
func checkNesting(data []byte, max int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			line++
		case '"', '\'':
			delim := []byte{c}
			if bytes.HasPrefix(data[i:], []byte{c, c, c}) {
				delim = []byte{c, c, c}
			}
			i += len(delim)
			for ; i < len(data); i++ {
				if data[i] == '\n' {
					line++
				}
				if c == '"' && data[i] == '\\' {
					i++
					continue
				}
				if bytes.HasPrefix(data[i:], delim) {
					i += len(delim) - 1
					break
				}
			}
		case '[', '{':
			if depth++; depth > max {
				return fmt.Errorf("line %d: arrays and inline tables nest deeper than %d levels", line, max)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
