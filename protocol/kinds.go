package protocol

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file names kinds in words for an operator: what a field takes
// (kindWords) and what a table holds (DescribeValue).

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
		return "a date or time"
	case []map[string]any:
		return "an array of tables ([[...]])"
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

// tomlField finds the field of struct type t that the TOML decoder fills
// from key, as an index for reflect.Value.FieldByIndex: the field whose name
// (its toml tag, or else its Go name) is key, or else one equal to key under
// case folding, as the decoder matches. Fields of embedded structs count as
// the struct's own.
func tomlField(t reflect.Type, key string) ([]int, bool) {
	var folded []int
	var walk func(t reflect.Type, at []int) ([]int, bool)
	walk = func(t reflect.Type, at []int) ([]int, bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("toml")
			if tag == "-" {
				continue
			}
			index := append(slices.Clip(at), i)
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				et := f.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					if fi, ok := walk(et, index); ok {
						return fi, true
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
				return index, true
			}
			if folded == nil && strings.EqualFold(name, key) {
				folded = index
			}
		}
		return nil, false
	}
	if fi, ok := walk(t, nil); ok {
		return fi, true
	}
	return folded, folded != nil
}
