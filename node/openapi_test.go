package node

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/api/apitest"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestAPIAnswersMatchOpenAPI: the control API's real answers — of a daemon
// that ran a session, over HTTP — are what its OpenAPI document says, for
// every operation and for its errors: status, content type and body, each
// body checked against its schema (which allows no undocumented field).
func TestAPIAnswersMatchOpenAPI(t *testing.T) {
	v := apitest.Validator(t)
	// node1 runs a standing session as well, so that the list of standing
	// sessions has one, with its last run.
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Sessions = []config.StandingConfig{standingPing("weekly", 2, 168*time.Hour)}
		}
	})
	tn := nodes[0]
	testutil.WaitFor(t, 15*time.Second, "the standing session's first run to end", func() bool {
		runs := tn.standing.List()
		return len(runs) == 1 && runs[0].Last != nil
	})
	id, err := tn.StartSession(pingSpec(3, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, tn, id, 15*time.Second)
	token := strings.Repeat("t", 32)
	// The codes and fields of some errors, by request.
	wantCodes := map[string]string{
		"POST /v0/sessions protocol = \"nope\"\n":                                   "spec.unknown_protocol protocol",
		"POST /v0/sessions " + string(pingSpec(2, "node1", "node2")) + "cont = 3\n": "spec.unknown_key params.cont",
		"POST /v0/sessions " + string(pingSpec(2, "node1", "node9")):                "spec.unknown_organization roles.participant[1]",
		"GET /v0/sessions/00000000000000ff ":                                        "session.not_found ",
		"POST /v0/sessions/" + id + "/cancel ":                                      "session.not_active ",
	}
	base := "http://" + tn.APIAddr()
	for _, c := range []struct {
		method, path, body string
		token              string
		code               int
	}{
		{"GET", "/v0/node", "", token, 200},
		{"GET", "/v0/auth/scope", "", token, 200},
		{"GET", "/v0/policy", "", token, 200},
		{"GET", "/v0/peers/refused", "", token, 200},
		{"POST", "/v0/peers", "[[peers]]\nname = 3\n", token, 400},
		{"GET", "/v0/peers", "", token, 200},
		{"GET", "/v0/sessions", "", token, 200},
		{"GET", "/v0/sessions?name=weekly", "", token, 200},
		{"GET", "/v0/sessions?limit=1", "", token, 200},
		{"GET", "/v0/sessions?limit=0", "", token, 400},
		{"GET", "/v0/sessions/" + id, "", token, 200},
		{"GET", "/v0/sessions/" + id + "/result", "", token, 200},
		{"GET", "/v0/sessions/" + id + "/logs", "", token, 200},
		{"GET", "/v0/sessions/" + id + "/logs?since=2", "", token, 200},
		{"GET", "/v0/sessions/" + id + "/logs?since=-1", "", token, 400},
		{"GET", "/v0/sessions/00000000000000ff", "", token, 404},
		{"GET", "/v0/sessions/00000000000000ff/result", "", token, 404},
		{"POST", "/v0/sessions/" + id + "/cancel", "", token, 409},
		{"GET", "/v0/standing", "", token, 200},
		{"POST", "/v0/sessions", "protocol = \"nope\"\n", token, 400},
		{"POST", "/v0/sessions", string(pingSpec(2, "node1", "node2")) + "cont = 3\n", token, 400},
		{"POST", "/v0/sessions", string(pingSpec(2, "node1", "node9")), token, 400},
		{"POST", "/v0/sessions", string(pingSpec(2, "node1", "node2")), token, 201},
		{"POST", "/v0/sessions", `{"protocol": "ping", "roles": {"participant": ["node1", "node2"]}, "params": {"count": 2}}`, token, 201},
		{"POST", "/v0/config/reload", "", token, 400}, // the test daemon was not started from a file
		{"GET", "/v0/openapi.json", "", token, 200},
		{"GET", "/metrics", "", token, 200},
		{"GET", "/v0/node", "", "wrong", 401},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+c.token)
			switch {
			case strings.HasPrefix(c.body, "{"):
				req.Header.Set("Content-Type", "application/json")
			case c.body != "":
				req.Header.Set("Content-Type", "application/toml")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.code, body)
			}
			if want, ok := wantCodes[c.method+" "+c.path+" "+c.body]; ok {
				var e apitype.Error
				if err := json.Unmarshal(body, &e); err != nil || e.Code+" "+e.Field != want {
					t.Errorf("code and field %q %q, want %q: %s", e.Code, e.Field, want, body)
				}
			}
			apitest.CheckResponse(t, v, req, c.body, resp, body)
		})
	}
}

// TestReadOnlyTokenOnDaemon: a daemon with api.read_token_file answers the
// read-only token's reads and refuses it what changes the node, with
// scope.insufficient; a read-only token equal to the operator's is refused
// at start.
func TestReadOnlyTokenOnDaemon(t *testing.T) {
	cfg := testConfigs(t, 1)[0]
	cfg.API.ReadTokenFile = filepath.Join(cfg.Node.DataDir, "api.read-token")
	readTok := strings.Repeat("r", 32)
	if err := os.WriteFile(cfg.API.ReadTokenFile, []byte(readTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tn := startNode(t, cfg)
	do := func(method, path, token string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+tn.APIAddr()+path, strings.NewReader(`protocol = "ping"`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := do("GET", "/v0/node", readTok); code != 200 {
		t.Errorf("read token, GET /v0/node: %d %s", code, body)
	}
	if code, body := do("POST", "/v0/sessions", readTok); code != 403 || !strings.Contains(body, "scope.insufficient") {
		t.Errorf("read token, POST /v0/sessions: %d %s, want 403 scope.insufficient", code, body)
	}
	if code, _ := do("POST", "/v0/config/reload", strings.Repeat("t", 32)); code == 403 || code == 401 {
		t.Errorf("operator token, POST /v0/config/reload: %d", code)
	}
	same := testConfigs(t, 1)[0]
	same.API.ReadTokenFile = same.API.TokenFile
	if _, err := tryStartNode(t, same); err == nil || !strings.Contains(err.Error(), "must differ") {
		t.Errorf("a read-only token equal to the operator's: %v", err)
	}
}
