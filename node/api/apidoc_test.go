package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write docs/api.md from openapi.json")

// TestAPIDoc: docs/api.md, the control API's reference for people, is what
// openapi.json says, rendered (apiMarkdown). After changing the document,
// run go test ./node/api -run TestAPIDoc -update.
func TestAPIDoc(t *testing.T) {
	md, err := apiMarkdown(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "api.md")
	if *update {
		if err := os.WriteFile(path, md, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, md) {
		t.Errorf("docs/api.md is not what openapi.json says; run go test ./node/api -run TestAPIDoc -update")
	}
}

type oasSchema struct {
	Ref         string               `json:"$ref"`
	Type        any                  `json:"type"`
	Format      string               `json:"format"`
	Enum        []any                `json:"enum"`
	Const       any                  `json:"const"`
	Items       *oasSchema           `json:"items"`
	Properties  map[string]oasSchema `json:"properties"`
	Required    []string             `json:"required"`
	AddProps    json.RawMessage      `json:"additionalProperties"`
	Description string               `json:"description"`
	Minimum     *float64             `json:"minimum"`
}

type oasResponse struct {
	Description string `json:"description"`
	Content     map[string]struct {
		Schema oasSchema `json:"schema"`
	} `json:"content"`
}

type oasOperation struct {
	OperationID string `json:"operationId"`
	Scope       string `json:"x-scope"`
	Summary     string `json:"summary"`
	Description string `json:"description"`
	Tags        []string
	Parameters  []struct {
		Name        string    `json:"name"`
		In          string    `json:"in"`
		Required    bool      `json:"required"`
		Schema      oasSchema `json:"schema"`
		Description string    `json:"description"`
	} `json:"parameters"`
	RequestBody *struct {
		Description string `json:"description"`
		Content     map[string]struct {
			Schema oasSchema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]oasResponse `json:"responses"`
}

// apiMarkdown renders an OpenAPI document as the reference page: the
// operations by path, then the types.
func apiMarkdown(doc []byte) ([]byte, error) {
	var d struct {
		Info struct {
			Title, Version, Description string
		} `json:"info"`
		Paths      map[string]map[string]oasOperation `json:"paths"`
		Components struct {
			Schemas map[string]oasSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The control API (%s)\n\n", d.Info.Version)
	b.WriteString("<!-- Written from node/api/openapi.json by `go test ./node/api -run TestAPIDoc -update`; edit that, not this. -->\n\n")
	fmt.Fprintf(&b, "%s\n\n", d.Info.Description)
	b.WriteString("The machine-readable contract is the OpenAPI 3.1 document [`node/api/openapi.json`](../node/api/openapi.json), " +
		"also served by the daemon at `GET /v0/openapi.json`. Every request carries `Authorization: Bearer TOKEN`: the " +
		"operator token (`api.token_file`) may do everything, the read-only one (`api.read_token_file`, if set) only the " +
		"routes of scope `read` (every GET route but Go's profiles; another answers `403`, `scope.insufficient`); " +
		"every error is an RFC 9457 problem (`application/problem+json`, an [Error](#error)) whose `code` names its class, " +
		"stable across releases, and whose `field` names the spec's key at fault, when there is one: a missing or wrong " +
		"token is answered `401` (`unauthorized`), a path no route has `404` (`route.not_found`), a method a path does " +
		"not take `405` (`route.method_not_allowed`, with the `Allow` header). `POST /v0/sessions` takes the spec's " +
		"TOML text, or the same spec as a JSON object (`Content-Type: application/json`).\n\n## Routes\n\n")
	paths := make([]string, 0, len(d.Paths))
	for p := range d.Paths {
		paths = append(paths, p)
	}
	// The /v0 routes first, then /metrics and Go's profiles.
	slices.SortFunc(paths, func(a, b string) int {
		if av, bv := strings.HasPrefix(a, "/v0/"), strings.HasPrefix(b, "/v0/"); av != bv {
			if av {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, p := range paths {
		methods := make([]string, 0, len(d.Paths[p]))
		for m := range d.Paths[p] {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		for _, m := range methods {
			op := d.Paths[p][m]
			fmt.Fprintf(&b, "### %s %s\n\n%s. Token scope: %s.\n\n", strings.ToUpper(m), p, op.Summary, op.Scope)
			if op.Description != "" {
				fmt.Fprintf(&b, "%s\n\n", op.Description)
			}
			if len(op.Parameters) > 0 {
				b.WriteString("| parameter | in | type | required | |\n|---|---|---|---|---|\n")
				for _, prm := range op.Parameters {
					fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", prm.Name, prm.In, typeName(prm.Schema), yesNo(prm.Required), prm.Description)
				}
				b.WriteString("\n")
			}
			if rb := op.RequestBody; rb != nil {
				fmt.Fprintf(&b, "Request body (%s): %s\n\n", strings.Join(sortedKeys(rb.Content), ", "), rb.Description)
			}
			b.WriteString("| status | | body |\n|---|---|---|\n")
			for _, code := range sortedKeys(op.Responses) {
				r := op.Responses[code]
				body := ""
				for _, ct := range sortedKeys(r.Content) {
					if body != "" {
						body += ", "
					}
					body += typeName(r.Content[ct].Schema) + " (" + ct + ")"
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", code, r.Description, body)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("## Types\n\nA field not marked required may be left out of an answer.\n\n")
	for _, name := range sortedKeys(d.Components.Schemas) {
		s := d.Components.Schemas[name]
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", name, s.Description)
		if len(s.Properties) == 0 {
			continue
		}
		b.WriteString("| field | type | required | |\n|---|---|---|---|\n")
		for _, f := range sortedKeys(s.Properties) {
			p := s.Properties[f]
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f, typeName(p), yesNo(slices.Contains(s.Required, f)), p.Description)
		}
		b.WriteString("\n")
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n"), nil
}

// typeName writes a schema's type as the page shows it: a link to a named
// type, "array of …", a string's format or values.
func typeName(s oasSchema) string {
	if s.Ref != "" {
		n := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		return "[" + n + "](#" + strings.ToLower(n) + ")"
	}
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
	}
	var parts []string
	for _, t := range types {
		switch {
		case t == "array" && s.Items != nil:
			parts = append(parts, "array of "+typeName(*s.Items))
		case t == "string" && s.Format != "":
			parts = append(parts, "string ("+s.Format+")")
		case t == "string" && len(s.Enum) > 0:
			var vs []string
			for _, v := range s.Enum {
				vs = append(vs, fmt.Sprintf("`%v`", v))
			}
			parts = append(parts, "string: "+strings.Join(vs, ", "))
		case t == "string" && s.Const != nil:
			parts = append(parts, fmt.Sprintf("string: `%v`", s.Const))
		case t == "object" && len(s.AddProps) > 0 && string(s.AddProps) != "false":
			var v oasSchema
			if json.Unmarshal(s.AddProps, &v) == nil && (v.Type != nil || v.Ref != "") {
				parts = append(parts, "object of "+typeName(v))
			} else {
				parts = append(parts, "object")
			}
		default:
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "any JSON"
	}
	return strings.Join(parts, " or ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
