package api

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/prometheus/client_golang/prometheus"
)

// TestOpenAPIIsValid: the document is valid OpenAPI 3.1, as a validator
// written for the specification reads it.
func TestOpenAPIIsValid(t *testing.T) {
	doc, err := libopenapi.NewDocument(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("building the validator: %v", errs)
	}
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s (%s)", se.Reason, se.FieldPath, se.KeywordLocation)
			}
		}
	}
}

// TestOpenAPIListsTheRoutes: every route the server mounts is an operation
// of the document, and every operation of the document a route.
func TestOpenAPIListsTheRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var documented, mounted []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, r := range Routes(&fakeBackend{}, "acme", prometheus.NewRegistry()) {
		mounted = append(mounted, r.Pattern)
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	for _, r := range mounted {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is mounted but not in openapi.json", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(mounted, r) {
			t.Errorf("openapi.json documents %s, which the server does not mount", r)
		}
	}
}
