package configexample

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Poison returns defaults (as config.DefaultValues returns them) with every
// value changed to another of its type: a string to "poison-N", a boolean
// to its opposite, a number to a large distinct one. A config template
// written with them whose settings do not carry them (Follows) writes a
// default as a literal, which would not follow a change of the default.
// Tests of the templates that write defaults use it.
func Poison(defaults map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(defaults))
	for i, key := range slices.Sorted(maps.Keys(defaults)) {
		v, err := decodeValue(defaults[key])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		switch v := v.(type) {
		case string:
			out[key] = strconv.Quote(fmt.Sprintf("poison-%d", i))
		case bool:
			out[key] = strconv.FormatBool(!v)
		case int64:
			out[key] = strconv.FormatInt(987650000+int64(i), 10)
		default:
			return nil, fmt.Errorf("%s: cannot poison a %T default", key, v)
		}
	}
	return out, nil
}

// Follows checks that every key of poisoned set in the TOML text (outside
// arrays of tables) has its poisoned value, and returns the keys it found.
func Follows(text []byte, poisoned map[string]string) ([]string, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(text), &doc); err != nil {
		return nil, err
	}
	var found []string
	for _, key := range slices.Sorted(maps.Keys(poisoned)) {
		got, ok := lookup(doc, strings.Split(key, "."))
		if !ok {
			continue
		}
		found = append(found, key)
		want, err := decodeValue(poisoned[key])
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(got, want) {
			return found, fmt.Errorf("%s = %v does not follow its default (want %v): write it with {{set %q}}, not as a literal", key, got, want, key)
		}
	}
	return found, nil
}

func lookup(doc map[string]any, path []string) (any, bool) {
	v, ok := doc[path[0]]
	if !ok || len(path) == 1 {
		return v, ok
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	return lookup(sub, path[1:])
}

func decodeValue(text string) (any, error) {
	var m map[string]any
	if _, err := toml.Decode("v = "+text, &m); err != nil {
		return nil, fmt.Errorf("%s is not a TOML value: %w", text, err)
	}
	return m["v"], nil
}
