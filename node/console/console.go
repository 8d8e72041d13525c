// Package console is the node's web console: plain HTML, CSS and ES
// modules embedded in the binary, served by the control API's listener
// under /ui/. The page itself holds no data and needs no token to load; it
// asks the operator for a token, keeps it in the tab's sessionStorage, and
// reads everything from the /v0 control API with an Authorization: Bearer
// header. Nothing is fetched from anywhere else, so the console works
// air-gapped.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Prefix is the path under which Handler serves the console.
const Prefix = "/ui/"

// Handler serves the console's files under Prefix, with a Content Security
// Policy that lets the page reach its own origin only.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// static is embedded at build time; a missing directory is a
		// broken build, not a runtime condition.
		panic("console: embedded files missing: " + err.Error())
	}
	files := http.StripPrefix(Prefix, http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
