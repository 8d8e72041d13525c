package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// specText returns the spec's text from a request body of content type
// contentType: a JSON object (application/json, or any +json type) turned
// into the TOML text it stands for, which stays the spec's one format on the
// wire and in the records; any other body is that text already (the CLI
// sends application/toml; curl's --data-binary sends a form type). A JSON
// number is an integer if it is written as one, a float otherwise; null has
// no TOML value and is refused, naming its key.
func specText(contentType string, body []byte) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("spec: JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("spec: JSON: more than one value in the body")
	}
	t, err := tomlValue("", v)
	if err != nil {
		return nil, fmt.Errorf("spec: JSON: %w", err)
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(t); err != nil {
		return nil, fmt.Errorf("spec: JSON: %w", err)
	}
	return b.Bytes(), nil
}

// tomlValue converts a value decoded from JSON (with UseNumber) at key into
// one the TOML encoder writes as the spec would.
func tomlValue(key string, v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, fmt.Errorf("%s: null has no TOML value; leave the key out", keyName(key))
	case json.Number:
		if i, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyName(key), err)
		}
		return f, nil
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			y, err := tomlValue(join(key, k), x)
			if err != nil {
				return nil, err
			}
			m[k] = y
		}
		return m, nil
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			y, err := tomlValue(fmt.Sprintf("%s[%d]", keyName(key), i), x)
			if err != nil {
				return nil, err
			}
			s[i] = y
		}
		return s, nil
	default: // string, bool
		return v, nil
	}
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}

func keyName(key string) string {
	if key == "" {
		return "the spec"
	}
	return strings.TrimPrefix(key, ".")
}
