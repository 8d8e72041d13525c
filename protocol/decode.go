package protocol

import (
	"encoding"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
)

// This file is the one decoder of raw tables (a spec's [params] and
// [simulation], a config's [local.<family>.<role>]) into typed structs. It
// walks the table and the struct together, without encoding the table to
// TOML and decoding it again, so that every error names its key path and
// says in plain words what was wanted and what was written
// ("params.budget: want a whole number, got text "100"").

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// DecodeTable decodes a raw table (as found in Spec.Params or Spec.Simulation)
// into v, a pointer to a struct with toml tags, over the values v already
// holds (its defaults). The table may hold TOML values (int64, float64,
// string, bool, []any, map[string]any) or a program's Go values (int,
// []float64). A key matches a field as the TOML decoder matches it: by its
// toml tag or Go name, else under case folding. A field's want tag, if
// any, says in words what it takes, for errors, instead of its type's
// kind (`want:"a duration as text, such as \"5s\""`).
//
// Decoding is strict: a key v has no field for is an error naming it,
// prefixed with section (e.g. "params"). A value of the wrong kind is an
// error naming its key path and the kind wanted in plain words. Errors
// carry no line number: the raw table no longer knows its lines.
func DecodeTable(section string, raw map[string]any, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("%s: decoding into %T, not a pointer to a struct", section, v)
	}
	d := tableDecoder{}
	if err := d.table(section, raw, rv.Elem()); err != nil {
		return err
	}
	switch len(d.unknown) {
	case 0:
		return nil
	case 1:
		return keyError(KeyUnknown, d.unknown[0], fmt.Errorf("unknown key %s", d.unknown[0]))
	}
	slices.Sort(d.unknown)
	return keyError(KeyUnknown, d.unknown[0], fmt.Errorf("unknown keys %s", strings.Join(d.unknown, ", ")))
}

// tableDecoder collects the keys that have no field while it decodes.
type tableDecoder struct {
	unknown []string
}

// table decodes raw, found at path, into dst, a struct (or a pointer to
// one, or an empty interface).
func (d *tableDecoder) table(path string, raw map[string]any, dst reflect.Value) error {
	for dst.Kind() == reflect.Pointer {
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		dst = dst.Elem()
	}
	if dst.Kind() != reflect.Struct {
		return d.value(path, raw, dst, "")
	}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		index, ok := tomlField(dst.Type(), key)
		if !ok {
			d.unknown = append(d.unknown, path+"."+key)
			continue
		}
		f, err := dst.FieldByIndexErr(index)
		if err != nil {
			// A nil pointer to an embedded struct: allocate it.
			f = fieldAlloc(dst, index)
		}
		want := dst.Type().FieldByIndex(index).Tag.Get("want")
		if err := d.value(path+"."+key, raw[key], f, want); err != nil {
			return err
		}
	}
	return nil
}

// fieldAlloc returns the field of struct v at index, allocating the
// embedded struct pointers on the way.
func fieldAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// value decodes v, found at path, into dst. want, if not "", says what
// dst takes (a field's want tag). A nil v leaves dst as it is, as a key
// that is not there would.
func (d *tableDecoder) value(path string, v any, dst reflect.Value, want string) error {
	if v == nil {
		return nil
	}
	t := dst.Type()
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := d.value(path, v, p.Elem(), want); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		dst.Set(reflect.ValueOf(v))
		return nil
	}
	rv := reflect.ValueOf(v)
	if want == "" {
		want = kindWords(t)
	}
	mismatch := func() error {
		// A want that gives an example ends at a semicolon, not a comma.
		sep := ", got "
		if strings.ContainsAny(want, ",(") {
			sep = "; got "
		}
		return keyError(KeyKind, path, fmt.Errorf("%s: want %s%s%s", path, want, sep, DescribeValue(v)))
	}
	switch {
	case t == durationType:
		switch {
		case rv.Kind() == reflect.String:
			dur, err := time.ParseDuration(rv.String())
			if err != nil {
				return mismatch()
			}
			dst.SetInt(int64(dur))
		case isInt(rv.Kind()):
			n, ok := intOf(rv)
			if !ok {
				return keyError(KeyRange, path, fmt.Errorf("%s: %s is out of range for a duration", path, DescribeValue(v)))
			}
			dst.SetInt(n)
		default:
			return mismatch()
		}
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		if rv.Kind() != reflect.String {
			return mismatch()
		}
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(rv.String())); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		if !isInt(rv.Kind()) {
			return mismatch()
		}
		n, ok := intOf(rv)
		if !ok || dst.OverflowInt(n) {
			return keyError(KeyRange, path, fmt.Errorf("%s: %s is out of range for %s", path, DescribeValue(v), intRange(t)))
		}
		dst.SetInt(n)
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr:
		if !isInt(rv.Kind()) {
			return mismatch()
		}
		// A negative number into an unsigned field would wrap around
		// (data_seed = -1 becoming 18446744073709551615).
		if rv.Kind() >= reflect.Int && rv.Kind() <= reflect.Int64 && rv.Int() < 0 {
			return keyError(KeyRange, path, fmt.Errorf("%s: want a whole number of 0 or more, got %d", path, rv.Int()))
		}
		var n uint64
		if rv.Kind() >= reflect.Int && rv.Kind() <= reflect.Int64 {
			n = uint64(rv.Int())
		} else {
			n = rv.Uint()
		}
		if dst.OverflowUint(n) {
			return keyError(KeyRange, path, fmt.Errorf("%s: %s is out of range for %s", path, DescribeValue(v), intRange(t)))
		}
		dst.SetUint(n)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		var f float64
		switch {
		case rv.Kind() == reflect.Float32 || rv.Kind() == reflect.Float64:
			f = rv.Float()
		case rv.Kind() >= reflect.Int && rv.Kind() <= reflect.Int64:
			f = float64(rv.Int())
		case isInt(rv.Kind()):
			f = float64(rv.Uint())
		default:
			return mismatch()
		}
		if t.Kind() == reflect.Float32 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return keyError(KeyRange, path, fmt.Errorf("%s: %s is out of range for a 32-bit number", path, DescribeValue(v)))
		}
		dst.SetFloat(f)
	case t.Kind() == reflect.String:
		if rv.Kind() != reflect.String {
			return mismatch()
		}
		dst.SetString(rv.String())
	case t.Kind() == reflect.Bool:
		if rv.Kind() != reflect.Bool {
			return mismatch()
		}
		dst.SetBool(rv.Bool())
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return mismatch()
		}
		n := rv.Len()
		out := dst
		if t.Kind() == reflect.Slice {
			out = reflect.MakeSlice(t, n, n)
		} else if n != t.Len() {
			return keyError(KeyKind, path, fmt.Errorf("%s: want a list of %d, got a list of %d", path, t.Len(), n))
		}
		for i := range n {
			if err := d.value(fmt.Sprintf("%s[%d]", path, i), rv.Index(i).Interface(), out.Index(i), ""); err != nil {
				return fmt.Errorf("%w (%s is %s)", err, path, want)
			}
		}
		dst.Set(out)
	case t.Kind() == reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		return d.table(path, m, dst)
	case t.Kind() == reflect.Map:
		if t.Key().Kind() != reflect.String || rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
			return mismatch()
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(t))
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		for _, k := range keys {
			elem := reflect.New(t.Elem()).Elem()
			if err := d.value(path+"."+k, rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface(), elem, ""); err != nil {
				return err
			}
			dst.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), elem)
		}
	default:
		return fmt.Errorf("%s: a field of kind %s cannot be set from a table", path, t.Kind())
	}
	return nil
}

// intOf returns the whole number rv holds as an int64, false if it does
// not fit one.
func intOf(rv reflect.Value) (int64, bool) {
	if rv.Kind() >= reflect.Int && rv.Kind() <= reflect.Int64 {
		return rv.Int(), true
	}
	u := rv.Uint()
	return int64(u), u <= math.MaxInt64
}

// intRange names the range of a whole-number type, for an operator.
func intRange(t reflect.Type) string {
	bits := t.Bits()
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr {
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-bits))
	}
	return fmt.Sprintf("a whole number from %d to %d", -(int64(1) << (bits - 1)), int64(math.MaxInt64)>>(64-bits))
}
