package cli

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/protocol"
)

// wantsJSON reports whether a command's args ask for JSON output (--json
// or -json among its flags, before a "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// writeJSONError writes err on w as the control API writes its errors (an
// RFC 9457 problem, apitype.Error), so that a program reading a command's
// --json output reads its failure in the same shape: the daemon's code,
// field and HTTP status when the daemon answered the error; a spec's
// error (protocol.KeyError) as the daemon would answer it
// (spec.unknown_key, field params.cont); otherwise cli.usage (exit code 2), session.aborted (3), cli.gave_up (4) or
// cli.error (1), with status 0.
func writeJSONError(w io.Writer, err error) {
	e := apitype.Error{Type: "about:blank", Detail: err.Error(), Error: err.Error(), Title: "bandit-node error"}
	var ce *client.Error
	var ke *protocol.KeyError
	switch {
	case errors.As(err, &ce):
		e.Status, e.Title, e.Code, e.Field = ce.Status, http.StatusText(ce.Status), ce.Code, ce.Field
		if e.Code == "" {
			e.Code = "daemon.error" // a daemon from before codes
		}
	case errors.As(err, &ke):
		e.Code, e.Field = "spec."+ke.Code, ke.Key
	case clikit.IsUsage(err):
		e.Code = "cli.usage"
	case errors.Is(err, errAborted):
		e.Code = "session.aborted"
	case errors.Is(err, errGaveUp):
		e.Code = "cli.gave_up"
	default:
		e.Code = "cli.error"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(e)
}

// writeCounter counts the bytes written through it to w.
type writeCounter struct {
	w io.Writer
	n int64
}

func (c *writeCounter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
