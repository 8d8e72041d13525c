package node

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// webDriver is a W3C WebDriver session on chromedriver, spoken in plain
// HTTP and JSON.
type webDriver struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT/session/ID
}

func (d *webDriver) call(method, path string, body any) json.RawMessage {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil || res.StatusCode != 200 {
		d.t.Fatalf("webdriver %s %s: %d %.300s", method, path, res.StatusCode, raw)
	}
	return out.Value
}

// js runs script in the page and returns its value.
func (d *webDriver) js(script string, args ...any) json.RawMessage {
	d.t.Helper()
	if args == nil {
		args = []any{}
	}
	return d.call("POST", "/execute/sync", map[string]any{"script": script, "args": args})
}

// waitJS waits until script returns true, or fails with what.
func (d *webDriver) waitJS(what, script string, limit time.Duration) {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if string(d.js(script)) == "true" {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("browser: %s not seen within %v; page text: %.600s", what, limit, d.js("return document.body.innerText"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// jsString runs script and returns its value, a string.
func (d *webDriver) jsString(script string, args ...any) string {
	d.t.Helper()
	var s string
	json.Unmarshal(d.js(script, args...), &s)
	return s
}

// jsBool reports whether script returns true.
func (d *webDriver) jsBool(script string, args ...any) bool {
	d.t.Helper()
	return string(d.js(script, args...)) == "true"
}

func (d *webDriver) element(css string) string {
	d.t.Helper()
	var el map[string]string
	json.Unmarshal(d.call("POST", "/element", map[string]string{"using": "css selector", "value": css}), &el)
	for _, v := range el {
		return v
	}
	d.t.Fatalf("browser: no element %s", css)
	return ""
}

func (d *webDriver) click(css string) {
	d.call("POST", "/element/"+d.element(css)+"/click", map[string]any{})
}
func (d *webDriver) typeIn(css, text string) {
	d.call("POST", "/element/"+d.element(css)+"/value", map[string]string{"text": text})
}
func (d *webDriver) visit(url string) { d.call("POST", "/url", map[string]string{"url": url}) }

// shots writes a PNG of the page at desktop and phone width into dir; at
// phone width the page must not scroll sideways.
func (d *webDriver) shots(dir, name string) {
	d.t.Helper()
	for _, sz := range []struct {
		tag  string
		w, h int
	}{{"1280x800", 1280, 800}, {"phone", 390, 844}} {
		d.call("POST", "/window/rect", map[string]int{"width": sz.w, "height": sz.h})
		time.Sleep(300 * time.Millisecond) // let the layout settle before the picture
		if sz.tag == "phone" && !d.jsBool(`return document.documentElement.scrollWidth <= document.documentElement.clientWidth`) {
			d.t.Errorf("%s scrolls sideways at phone width; too wide: %s", name, d.jsString(`const cw = document.documentElement.clientWidth;
				return [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > cw + 1).slice(0, 6).map((e) => e.tagName + "." + e.className + (e.id ? "#" + e.id : "")).join(", ")`))
		}
		var b64 string
		json.Unmarshal(d.call("GET", "/screenshot", nil), &b64)
		png, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			d.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+sz.tag+".png"), png, 0o644); err != nil {
			d.t.Fatal(err)
		}
	}
	d.call("POST", "/window/rect", map[string]int{"width": 1280, "height": 800})
}

// startBrowser starts chromedriver and a headless Chromium session on it,
// both stopped when the test ends.
func startBrowser(t *testing.T, driver, browser string) *webDriver {
	t.Helper()
	port := testutil.FreePort(t)
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromedriver: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	root := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get(root + "/status"); err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("chromedriver did not answer /status within 20s")
		}
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": browser,
			"args": []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"}},
	}}}
	d := &webDriver{t: t, base: root}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(d.call("POST", "/session", caps), &sess)
	d.base = root + "/session/" + sess.SessionID
	t.Cleanup(func() { d.call("DELETE", "", nil) })
	return d

}

// browserTools finds chromedriver and Chromium, or skips the test.
func browserTools(t *testing.T) (driver, browser string) {
	t.Helper()
	driver, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Skip("chromedriver not installed (apt-get install -y chromium chromium-driver); the console's browser test does not run")
	}
	browser = "/usr/bin/chromium"
	if _, err := os.Stat(browser); err != nil {
		t.Skip("chromium not installed at /usr/bin/chromium (apt-get install -y chromium)")
	}
	return driver, browser
}

// consoleShots is the screenshots' directory: $BANDIT_CONSOLE_SHOTS, or a
// temporary one.
func consoleShots(t *testing.T) string {
	shots := os.Getenv("BANDIT_CONSOLE_SHOTS")
	if shots == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots
}

// TestConsoleInBrowser drives the web console in headless Chromium against
// three real daemons: sign in read-only, see the node ready, see what it
// accepts (the Policy page), the partner connected with its version and a
// peer the gater refused, with no sideways scroll at phone width; watch a
// session reach 100 % live, open its result chart, find cancel refused to
// the read-only token; the operator token cancels, and adds the refused
// peer's card, after which the two connect and the partners' rows are
// reached with the arrow keys. Screenshots go to $BANDIT_CONSOLE_SHOTS
// (default: a temporary directory).
func TestConsoleInBrowser(t *testing.T) {
	driver, browser := browserTools(t)
	shots := consoleShots(t)

	readToken := strings.Repeat("r", 32)
	// node3 is not in node1's address book: node1's gater refuses it,
	// until the console adds its card.
	nodes := startNetwork(t, 3, func(i int, cfg *config.Config) {
		cfg.API.ReadTokenFile = filepath.Join(cfg.Node.DataDir, "api.read.token")
		if err := os.WriteFile(cfg.API.ReadTokenFile, []byte(readToken), 0o600); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cfg.Peers = slices.DeleteFunc(cfg.Peers, func(p config.PeerConfig) bool { return p.Name == "node3" })
		}
		writeConfig(t, cfg.Path, configText(cfg))
	})
	ui := "http://" + nodes[0].APIAddr() + "/ui/"

	d := startBrowser(t, driver, browser)

	// The page loads without a token and asks for one.
	d.visit(ui)
	d.waitJS("the sign-in form", `return !document.getElementById("login").hidden`, 10*time.Second)
	d.shots(shots, "0-signin")
	d.typeIn("#token", readToken)
	d.click("#login-form button[type=submit]")
	d.waitJS("read-only scope", `return document.getElementById("scope").textContent === "read-only"`, 10*time.Second)
	d.waitJS("the node page", `return document.body.innerText.includes(arguments.length >= 0 && "Peer ID")`, 10*time.Second)
	d.waitJS("the node shown ready", `const r = document.getElementById("ready"); return !!r && r.innerText.trim() === "ready"`, 40*time.Second)
	d.shots(shots, "1-node")

	// What this node accepts: ping, from any partner, with what a
	// participant learns; the families without a policy declined.
	d.visit(ui + "#policy")
	d.waitJS("the policy page", `const s = document.querySelector('section[data-protocol="ping"]'); return !!s && s.innerText.includes("accepted") && s.innerText.includes("any partner") && s.querySelector('tr[data-role="participant"]').innerText.includes("round-trip times")`, 10*time.Second)
	if got := d.jsString(`return document.querySelector('section[data-protocol="samba"] h2').innerText`); !strings.Contains(got, "declined") {
		t.Errorf("samba, which node1's policy lacks, is shown %q", got)
	}
	d.shots(shots, "2-policy")

	d.visit(ui + "#partners")
	d.waitJS("node2 connected with a version", `const r = document.querySelector('tr[data-peer="node2"]'); return !!r && r.innerText.includes("connected") && !r.innerText.includes("not connected") && r.cells[4].innerText.trim() !== "—"`, 20*time.Second)
	n3 := nodes[2].ID().String()
	testutil.WaitFor(t, 30*time.Second, "node1's gater to refuse node3", func() bool {
		r, err := nodes[0].api.RefusedPeers(context.Background())
		return err == nil && len(r.Refused) > 0
	})
	d.visit(ui + "#node")
	d.visit(ui + "#partners")
	d.waitJS("node3 listed as refused", `return !!document.querySelector('tr[data-refused="`+n3+`"]')`, 10*time.Second)
	if !d.jsBool(`return document.getElementById("add-card").disabled && document.getElementById("own-card").innerText.includes('name = "node1"')`) {
		t.Error("the read-only token's Add button is enabled, or node1's own card is not shown")
	}
	// At phone width the partners' table stacks: no sideways scroll.
	d.call("POST", "/window/rect", map[string]int{"width": 390, "height": 844})
	d.waitJS("the partners' rows stacked at phone width", `return getComputedStyle(document.querySelector('tr[data-peer="node2"]')).display === "block"`, 5*time.Second)
	d.shots(shots, "3-partners")

	// A session started elsewhere reaches 100 % on the open page, live.
	d.visit(ui + "#sessions")
	d.waitJS("the sessions page", `return !!document.querySelector("#page h1") && document.querySelector("#page h1").innerText === "Sessions"`, 10*time.Second)
	d.js(`window.__sameLoad = true; return true`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s1, err := nodes[0].api.StartSession(ctx, pingSpec(30, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	d.waitJS("session 1 at 100 %", `const p = document.querySelector('[data-progress="`+s1.ID+`"] [role=progressbar]'); return !!p && p.getAttribute("aria-valuenow") === "100"`, 60*time.Second)
	if string(d.js(`return window.__sameLoad === true`)) != "true" {
		t.Fatal("the page reloaded to show progress")
	}
	d.shots(shots, "4-sessions")

	d.click(`a[href="#session/` + s1.ID + `"]`)
	d.waitJS("session 1's result chart", `return !!document.querySelector(".charts figure svg")`, 20*time.Second)
	d.shots(shots, "5-session-result")

	// Read-only: the cancel button of a running session is disabled, and
	// the API refuses the cancel with 403.
	s2, err := nodes[0].api.StartSession(ctx, pingSpec(100000, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	d.visit(ui + "#sessions")
	d.waitJS("session 2's disabled cancel", `const b = document.querySelector('button.cancel[data-id="`+s2.ID+`"]'); return !!b && b.disabled`, 20*time.Second)
	code := d.js(`return fetch("/v0/sessions/` + s2.ID + `/cancel", {method: "POST", headers: {Authorization: "Bearer ` + readToken + `"}}).then(r => r.status)`)
	if string(code) != "403" {
		t.Fatalf("read-only cancel answered %s, want 403", code)
	}

	// Operator: the button cancels.
	d.click("#logout")
	d.waitJS("the sign-in form again", `return !document.getElementById("login").hidden`, 10*time.Second)
	d.typeIn("#token", strings.Repeat("t", 32))
	d.click("#login-form button[type=submit]")
	d.waitJS("operator scope", `return document.getElementById("scope").textContent === "operator"`, 10*time.Second)
	d.visit(ui + "#sessions")
	d.waitJS("session 2's enabled cancel", `const b = document.querySelector('button.cancel[data-id="`+s2.ID+`"]'); return !!b && !b.disabled`, 20*time.Second)
	d.js(`window.confirm = () => true; return true`)
	d.click(`button.cancel[data-id="` + s2.ID + `"]`)
	if got := waitEnded(t, nodes[0], s2.ID, 30*time.Second); got.State == "completed" {
		t.Fatalf("session 2 completed; the console's cancel did not reach it")
	}
	d.waitJS("session 2 shown ended", `const r = document.querySelector('tr[data-session="`+s2.ID+`"]'); return !!r && !r.querySelector("button.cancel")`, 20*time.Second)
	d.shots(shots, "6-sessions-operator")
	// Operator: node3's card, as its operator would send it, added from
	// the Partners page; node1 reloads, connects to node3 and lists it no
	// more as refused.
	card, err := nodes[2].api.RefusedPeers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.visit(ui + "#partners")
	d.waitJS("the enabled Add button", `const b = document.getElementById("add-card"); return !!b && !b.disabled`, 10*time.Second)
	d.js(`document.getElementById("card").value = arguments[0]; return true`, card.PeerCard)
	d.click("#add-card")
	d.waitJS("node3 connected and no longer refused", `const r = document.querySelector('tr[data-peer="node3"]'); return !!r && r.innerText.includes("connected") && !r.innerText.includes("not connected") && !document.querySelector('tr[data-refused]')`, 30*time.Second)
	// The keyboard reaches every partner: arrow down from the first row.
	d.js(`document.querySelector('tr[data-peer="node2"]').focus(); return true`)
	d.call("POST", "/actions", map[string]any{"actions": []any{map[string]any{"type": "key", "id": "kbd", "actions": []any{
		map[string]string{"type": "keyDown", "value": "\uE015"}, map[string]string{"type": "keyUp", "value": "\uE015"}}}}})
	if got := d.jsString(`return document.activeElement.dataset.peer || document.activeElement.tagName`); got != "node3" {
		t.Errorf("ArrowDown from node2's row focused %q, want node3's row", got)
	}
	d.shots(shots, "7-partners-operator")
	d.visit(ui + "#standing")
	d.waitJS("the standing page", `return document.querySelector("#page h1") && document.querySelector("#page h1").innerText === "Standing sessions"`, 10*time.Second)
	d.shots(shots, "8-standing")
	t.Logf("screenshots in %s", shots)
}

// TestConsoleShowsASAMBASession: a SAMBA session among six daemons,
// started at node1 as `bandit-node session start` starts it (the control
// API's POST /v0/sessions), appears on node1's open Sessions page read-only,
// reaches 100 % there without a reload, and its page draws the result.
func TestConsoleShowsASAMBASession(t *testing.T) {
	driver, browser := browserTools(t)
	shots := consoleShots(t)
	readToken := strings.Repeat("r", 32)
	means := []float64{0.6, 0.45, 0.3}
	nodes := startNetwork(t, 6, func(i int, cfg *config.Config) {
		cfg.Log.Level = "warn"
		cfg.API.ReadTokenFile = filepath.Join(cfg.Node.DataDir, "api.read.token")
		if err := os.WriteFile(cfg.API.ReadTokenFile, []byte(readToken), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: means[i-3]}}
		}
	})
	ui := "http://" + nodes[0].APIAddr() + "/ui/"
	d := startBrowser(t, driver, browser)
	d.visit(ui)
	d.waitJS("the sign-in form", `return !document.getElementById("login").hidden`, 10*time.Second)
	d.typeIn("#token", readToken)
	d.click("#login-form button[type=submit]")
	d.waitJS("read-only scope", `return document.getElementById("scope").textContent === "read-only"`, 10*time.Second)
	d.visit(ui + "#sessions")
	d.waitJS("the sessions page", `return !!document.querySelector("#page h1") && document.querySelector("#page h1").innerText === "Sessions"`, 10*time.Second)
	d.js(`window.__sameLoad = true; return true`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A batched session: its result page shows the batch beside the reward.
	spec := "protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nalgorithm = \"ucb\"\nbudget = 3000\npaillier_bits = 512\nbatch = 10\n"
	s, err := nodes[0].api.StartSession(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	d.waitJS("the SAMBA session at 100 %", `const p = document.querySelector('[data-progress="`+s.ID+`"] [role=progressbar]'); return !!p && p.getAttribute("aria-valuenow") === "100"`, 90*time.Second)
	if string(d.js(`return window.__sameLoad === true`)) != "true" {
		t.Fatal("the page reloaded to show progress")
	}
	d.shots(shots, "9-samba-sessions")
	d.click(`a[href="#session/` + s.ID + `"]`)
	d.waitJS("the SAMBA result's charts", `return !!document.querySelector(".charts figure svg") && document.querySelector("#page").innerText.includes("samba")`, 20*time.Second)
	if got := d.jsString(`return [...document.querySelectorAll("#page .stat")].filter(e => e.querySelector("span").innerText === "batch").map(e => e.querySelector("b").innerText).join()`); got != "10" {
		t.Errorf("the result page shows batch %q, want 10", got)
	}
	d.shots(shots, "10-samba-result")
}
