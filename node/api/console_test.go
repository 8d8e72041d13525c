package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestConsoleFilesNeedNoTokenAndServeNoData: the console's files load
// without a token, with a CSP that keeps the page on its own origin; every
// data route still wants one, and nothing but GET reaches /ui/ unauthenticated.
func TestConsoleFilesNeedNoTokenAndServeNoData(t *testing.T) {
	h := Handler(&fakeBackend{}, Tokens{Operator: "op", Read: "ro"}, "acme", prometheus.NewRegistry())
	for _, tc := range []struct {
		method, path string
		code         int
		want         string
	}{
		{"GET", "/ui/", 200, "<title>bandit-node console</title>"},
		{"GET", "/ui/app.js", 200, "/v0/events"},
		{"GET", "/ui/style.css", 200, ":focus-visible"},
		{"GET", "/ui/missing.js", 404, ""},
		{"POST", "/ui/", 401, "unauthorized"},
		{"GET", "/v0/node", 401, "unauthorized"},
		{"GET", "/v0/peers", 401, "unauthorized"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tc.code || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%s %s: %d %.200s; want %d with %q", tc.method, tc.path, rec.Code, body, tc.code, tc.want)
			}
			if tc.code == 200 && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("%s: CSP %q", tc.path, rec.Header().Get("Content-Security-Policy"))
			}
			if strings.Contains(string(body), "http://") || strings.Contains(string(body), "https://") {
				t.Errorf("%s refers to an outside resource", tc.path)
			}
		})
	}
	// A read-only token may read but not cancel (what the console's
	// disabled buttons stand for).
	req := httptest.NewRequest("POST", "/v0/sessions/00000000000000a1/cancel", nil)
	req.Header.Set("Authorization", "Bearer ro")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("read-only cancel: %d, want 403", rec.Code)
	}
}
