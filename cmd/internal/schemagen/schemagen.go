// Package schemagen writes the JSON Schemas of a node's config.toml and of a
// session spec (docs/schema/config.schema.json, session.schema.json) from
// the Go types the daemon decodes them into (config.Config; the spec's
// top-level tables as protocol.ParseSpec reads them), so that editors
// (Taplo, Even Better TOML) can check a file as the operator types. `go
// generate` at the root runs ./generate; the tests fail when the committed
// schemas are not what Config and Session return, and validate
// config.example.toml and examples/*.toml against them.
package schemagen

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/invopop/jsonschema"
)

// baseURL is where the schemas' $id point: their place in the repository.
const baseURL = "https://github.com/bandit-node/bandit-node/docs/schema/"

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// reflector returns the reflector both schemas are made with: TOML key
// names, no key required that the daemon defaults, unknown keys refused
// (the daemon's decoding is strict), and a type that decodes itself from
// a string (a duration, an age) a string.
func reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		FieldNameTag:               "toml",
		RequiredFromJSONSchemaTags: true,
		DoNotReference:             true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if reflect.PointerTo(t).Implements(textUnmarshaler) {
				return &jsonschema.Schema{Type: "string"}
			}
			return nil
		},
	}
}

// Config returns the JSON Schema of config.toml, reflected from
// config.Config.
func Config() ([]byte, error) {
	s := reflector().Reflect(&config.Config{})
	s.ID = baseURL + "config.schema.json"
	s.Title = "bandit-node config.toml"
	s.Description = "A bandit-node daemon's config file; every key is explained in config.example.toml (bandit-node config example)."
	return encode(s)
}

// spec mirrors the top-level tables of a session spec as
// protocol.ParseSpec decodes them; roles, params and simulation are read
// by each protocol family, which checks their keys.
type spec struct {
	Protocol string `toml:"protocol" jsonschema:"required" jsonschema_description:"the protocol family: one of the registered families (bandit-node simulate and session start name them)"`
	// Roles maps each role to the address-book names playing it.
	Roles map[string][]string `toml:"roles" jsonschema_description:"role = [organization names from the address book]"`
	// Params are the protocol's public parameters.
	Params map[string]any `toml:"params" jsonschema_description:"the protocol's public parameters"`
	// Simulation is read by bandit-node simulate only.
	Simulation map[string]any `toml:"simulation" jsonschema_description:"read by bandit-node simulate only: what would be each daemon's local data"`
}

// Session returns the JSON Schema of a session spec, with the protocol
// names families gives.
func Session(families []string) ([]byte, error) {
	s := reflector().Reflect(&spec{})
	s.ID = baseURL + "session.schema.json"
	s.Title = "bandit-node session spec"
	s.Description = "A session spec: the protocol, who plays which role, the public parameters (docs/sessions.md)."
	if p, ok := s.Properties.Get("protocol"); ok {
		for _, f := range slices.Sorted(slices.Values(families)) {
			p.Enum = append(p.Enum, f)
		}
	}
	return encode(s)
}

func encode(s *jsonschema.Schema) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
