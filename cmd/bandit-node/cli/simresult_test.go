package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/bandit-node/bandit-node/node/api/apitest"
)

// TestSimulateJSONIsASessionResult: what `simulate --json` prints, less its
// simulation facts, is a valid answer of GET /v0/sessions/{id}/result by
// the control API's OpenAPI document (whose schemas allow no undocumented
// field), for a family of each kind of result — so a program reads a
// simulated and a real session's result alike.
func TestSimulateJSONIsASessionResult(t *testing.T) {
	v := apitest.Validator(t)
	specs := map[string]string{
		"ping":  "protocol = \"ping\"\n[params]\ncount = 2\n[simulation]\nparticipants = 2\n",
		"samba": "protocol = \"samba\"\n[params]\nalgorithm = \"ucb\"\nbudget = 30\npaillier_bits = 512\n[simulation]\narms = [0.6, 0.4]\n",
		"bai":   "protocol = \"bai\"\n[params]\nalgorithm = \"independent\"\ndelta = 0.1\n[simulation]\nagents = 2\narms = [0.9, 0.1]\n",
		"pfcb":  "protocol = \"pfcb\"\n[params]\nalgorithm = \"pfcb\"\nrounds = 200\nalpha = 0.4\nepsilon = 1.0\ndelta = 0.01\nt_lo = 20\nt_hi = 400\nomega1 = 0.1\nomega2 = 10\n[simulation]\nagents = 2\nproducers = 4\n",
	}
	for name, text := range specs {
		t.Run(name, func(t *testing.T) {
			spec := writeSpec(t, t.TempDir(), name+".toml", text)
			out, stderr, err := run(t, "simulate", spec, "--json")
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var all map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &all); err != nil {
				t.Fatal(err)
			}
			if _, ok := all["simulation"]; !ok {
				t.Errorf("no simulation facts:\n%s", out)
			}
			delete(all, "simulation")
			var s struct {
				Session struct {
					ID       string              `json:"id"`
					Protocol string              `json:"protocol"`
					State    string              `json:"state"`
					Roles    map[string][]string `json:"roles"`
				} `json:"session"`
			}
			body, _ := json.Marshal(all)
			if err := json.Unmarshal(body, &s); err != nil {
				t.Fatal(err)
			}
			if s.Session.Protocol != name || s.Session.State != "completed" || len(s.Session.Roles) == 0 || s.Session.ID == "" {
				t.Errorf("session %+v", s.Session)
			}
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:5601/v0/sessions/"+filepath.Base(s.Session.ID)+"/result", nil)
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Request: req}
			apitest.CheckResponse(t, v, req, "", resp, body)
		})
	}
}
