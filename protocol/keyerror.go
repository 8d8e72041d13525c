package protocol

import (
	"errors"
	"regexp"
)

// KeyError is what is wrong with one key of a spec, or of a table decoded
// from one: the key, dotted ("params.budget"), and a Code that a program
// acts on without reading the message, which is Err's, unchanged. The
// control API answers it as the error's code and field.
type KeyError struct {
	// Code is one of the Key… codes.
	Code string
	// Key is the key at fault; with several, the first.
	Key string
	Err error
}

// The codes of a KeyError.
const (
	// KeyUnknown: the key is not one the spec or the table has.
	KeyUnknown = "unknown_key"
	// KeyMissing: a key the spec needs is not there.
	KeyMissing = "missing_key"
	// KeyKind: the value is of the wrong kind (text for a number, a list
	// of the wrong length).
	KeyKind = "wrong_kind"
	// KeyRange: the value is of the right kind and out of range.
	KeyRange = "out_of_range"
	// KeyProtocol: the spec's protocol is not one this node speaks.
	KeyProtocol = "unknown_protocol"
	// KeyInvalid: the value breaks one of the family's own rules (a
	// bound, a relation between keys).
	KeyInvalid = "invalid_value"
)

func (e *KeyError) Error() string { return e.Err.Error() }

// Unwrap returns the error of the key.
func (e *KeyError) Unwrap() error { return e.Err }

// keyError returns a KeyError of code for key around err.
func keyError(code, key string, err error) *KeyError {
	return &KeyError{Code: code, Key: key, Err: err}
}

// keyPrefix is how a family's errors begin when they concern one key, by
// the project's convention: the key, then what is wrong ("params.budget:
// 0 is out of range [1, 100000]").
var keyPrefix = regexp.MustCompile(`^((?:params|roles|simulation|local)(?:\.[a-z_0-9]+|\[[0-9]+\])+): `)

// AsKeyError returns err as a KeyError: itself if it is one (or wraps
// one), one of code KeyInvalid for the key its message begins with, or err
// unchanged when it names no key.
func AsKeyError(err error) error {
	var ke *KeyError
	if err == nil || errors.As(err, &ke) {
		return err
	}
	if m := keyPrefix.FindStringSubmatch(err.Error()); m != nil {
		return keyError(KeyInvalid, m[1], err)
	}
	return err
}
