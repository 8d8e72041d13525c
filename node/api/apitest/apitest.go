// Package apitest holds a test's checks of answers against the control
// API's OpenAPI document (api.OpenAPI): a daemon's real answers over HTTP,
// and whatever else claims their shape (simulate --json is a session's
// result). Only tests import it.
package apitest

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/bandit-node/bandit-node/node/api"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// Validator returns a validator of the control API's document; it fails
// t if the document cannot be read.
func Validator(t testing.TB) validator.Validator {
	t.Helper()
	doc, err := libopenapi.NewDocument(api.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// CheckResponse fails t, naming each schema error, unless resp, whose body
// is body, is what the document says req is answered with: its status,
// content type and body (the schemas allow no undocumented field). reqBody
// is req's body, which the validator reads again.
func CheckResponse(t testing.TB, v validator.Validator, req *http.Request, reqBody string, resp *http.Response, body []byte) {
	t.Helper()
	req.Body = io.NopCloser(bytes.NewReader([]byte(reqBody)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s", se.Reason, se.FieldPath)
			}
		}
		t.Logf("body: %s", body)
	}
}
