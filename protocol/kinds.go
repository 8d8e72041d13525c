package protocol

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// This file checks that the values of a raw table (a spec's [params] or
// [simulation]) have the kinds of the struct fields they decode into, so
// that a mismatch is reported by its key path and in plain words
// ("params.budget: want a whole number, got text "100"") rather than by the
// TOML decoder, which names Go types and the line of a re-encoded table.

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkKinds checks every value of raw that has a field in t (a struct
// type, or a pointer to one) against the field's type. Keys with no field
// are left to the decoder's strict check, which names them as unknown.
func checkKinds(path string, raw map[string]any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		ft, ok := tomlField(t, key)
		if !ok {
			continue
		}
		if err := checkKind(path+"."+key, raw[key], ft); err != nil {
			return err
		}
	}
	return nil
}

// checkKind checks value v, found at path, against destination type t.
func checkKind(path string, v any, t reflect.Type) error {
	if v == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		return nil // anything goes
	}
	want := kindWords(t)
	rv := reflect.ValueOf(v)
	mismatch := func() error {
		return fmt.Errorf("%s: want %s, got %s", path, want, DescribeValue(v))
	}
	switch {
	case t == durationType:
		if rv.Kind() != reflect.String && !isInt(rv.Kind()) {
			return mismatch()
		}
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		if rv.Kind() != reflect.String {
			return mismatch()
		}
	case isInt(t.Kind()):
		if !isInt(rv.Kind()) {
			return mismatch()
		}
		// A negative number into an unsigned field would wrap around
		// (data_seed = -1 becoming 18446744073709551615).
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 && rv.Kind() >= reflect.Int && rv.Kind() <= reflect.Int64 && rv.Int() < 0 {
			return fmt.Errorf("%s: want a whole number of 0 or more, got %d", path, rv.Int())
		}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		if !isInt(rv.Kind()) && rv.Kind() != reflect.Float32 && rv.Kind() != reflect.Float64 {
			return mismatch()
		}
	case t.Kind() == reflect.String:
		if rv.Kind() != reflect.String {
			return mismatch()
		}
	case t.Kind() == reflect.Bool:
		if rv.Kind() != reflect.Bool {
			return mismatch()
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return mismatch()
		}
		for i := range rv.Len() {
			err := checkKind(fmt.Sprintf("%s[%d]", path, i), rv.Index(i).Interface(), t.Elem())
			if err != nil {
				return fmt.Errorf("%w (%s is %s)", err, path, want)
			}
		}
	case t.Kind() == reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		return checkKinds(path, m, t)
	case t.Kind() == reflect.Map:
		if rv.Kind() != reflect.Map {
			return mismatch()
		}
		if m, ok := v.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if err := checkKind(path+"."+k, m[k], t.Elem()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isInt(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64
}

// kindWords names what a field of type t takes, for an operator: "a whole
// number", "a number", "text", "a list of numbers".
func kindWords(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return `a duration such as "1s"`
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		return "text"
	case isInt(t.Kind()):
		return "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "text"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return "a list of " + pluralWords(t.Elem())
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "a table"
	}
	return "a value"
}

// pluralWords is kindWords for the elements of a list.
func pluralWords(t reflect.Type) string {
	switch w := kindWords(t); w {
	case "a whole number":
		return "whole numbers"
	case "a number":
		return "numbers"
	case "text":
		return "texts"
	case "true or false":
		return "true/false values"
	default:
		if rest, ok := strings.CutPrefix(w, "a list of "); ok {
			return "lists of " + rest
		}
		if w == "a table" {
			return "tables"
		}
		return "values"
	}
}

// DescribeValue says what an operator wrote, in TOML terms: text "100",
// 2.5, a list, a table. The simulator's own [simulation] keys use it too.
func DescribeValue(v any) string {
	if v == nil {
		return "nothing"
	}
	switch x := v.(type) {
	case string:
		const max = 40
		if utf8.RuneCountInString(x) > max {
			x = string([]rune(x)[:max]) + "…"
		}
		return "text " + strconv.Quote(x)
	case time.Time:
		return "a date"
	}
	rv := reflect.ValueOf(v)
	switch k := rv.Kind(); {
	case k >= reflect.Int && k <= reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case k >= reflect.Uint && k <= reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case k == reflect.Float32 || k == reflect.Float64:
		f := rv.Float()
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !math.IsInf(f, 0) && !math.IsNaN(f) && !strings.ContainsAny(s, ".e") {
			s += ".0" // 5.0 is not the whole number 5 to TOML
		}
		return s
	case k == reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case k == reflect.Slice || k == reflect.Array:
		return "a list"
	case k == reflect.Map || k == reflect.Struct:
		return "a table"
	}
	return fmt.Sprintf("a value of kind %s", rv.Kind())
}

// tomlField finds the type of the field of struct type t that the TOML
// decoder fills from key: the field whose name (its toml tag, or else its Go
// name) is key, or else one equal to key under case folding, as the decoder
// matches. Fields of embedded structs count as the struct's own.
func tomlField(t reflect.Type, key string) (reflect.Type, bool) {
	var folded reflect.Type
	var walk func(t reflect.Type) (reflect.Type, bool)
	walk = func(t reflect.Type) (reflect.Type, bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("toml")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				et := f.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					if ft, ok := walk(et); ok {
						return ft, true
					}
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if name == key {
				return f.Type, true
			}
			if folded == nil && strings.EqualFold(name, key) {
				folded = f.Type
			}
		}
		return nil, false
	}
	if ft, ok := walk(t); ok {
		return ft, true
	}
	return folded, folded != nil
}

// tableDecodeError rewrites an error of the TOML decoder that checkKinds did
// not foresee (a whole number out of a field's range, say) for an operator:
// it names the key path under section and drops the decoder's line number,
// which counts lines of the re-encoded table, not of the operator's file.
func tableDecodeError(section string, err error) error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		if perr.LastKey != "" {
			return fmt.Errorf("%s.%s: %s", section, perr.LastKey, perr.Message)
		}
		return fmt.Errorf("%s: %s", section, perr.Message)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "toml: "); ok {
		const keyOpen, keyClose = `(last key "`, `"): `
		if i := strings.Index(rest, keyOpen); i >= 0 {
			after := rest[i+len(keyOpen):]
			if j := strings.Index(after, keyClose); j >= 0 {
				return fmt.Errorf("%s.%s: %s", section, after[:j], after[j+len(keyClose):])
			}
		}
		if strings.HasPrefix(rest, "line ") {
			if j := strings.Index(rest, ": "); j >= 0 {
				rest = rest[j+2:]
			}
		}
		return fmt.Errorf("%s: %s", section, rest)
	}
	return fmt.Errorf("%s: %w", section, err)
}
