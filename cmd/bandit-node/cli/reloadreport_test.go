package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestReloadAndReportWithoutDaemon: with no daemon on the control API's
// address, a reload and a dry run both print what the command says then
// and succeed; without a readable token a reload is an error naming it and
// a dry run says it has nothing to compare with. (A daemon that reloads,
// refuses or would apply a change: TestPeersAdd, TestConfigCheck.)
func TestReloadAndReportWithoutDaemon(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "api.token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nobody := config.APIConfig{Listen: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), TokenFile: token}
	noToken := config.APIConfig{Listen: nobody.Listen, TokenFile: filepath.Join(dir, "missing.token")}
	down := func(err error) string { return fmt.Sprintf("down (%v)", err) }
	for _, tc := range []struct {
		name    string
		api     config.APIConfig
		dryRun  bool
		out     string // the start of stdout
		wantErr string // in the error; "" for none
	}{
		{"reload, no daemon", nobody, false, "down (", ""},
		{"dry run, no daemon", nobody, true, "down (", ""},
		{"reload, no token", noToken, false, "", "reading the API token"},
		{"dry run, no token", noToken, true, "no running daemon to compare with (reading the API token", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := reloadAndReport(context.Background(), tc.api, &out, reloadReport{dryRun: tc.dryRun, text: []byte("# x\n"),
				refused: "refused", notRunning: down})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if !strings.HasPrefix(out.String(), tc.out) || (tc.out == "") != (out.Len() == 0) {
				t.Errorf("stdout %q, want it to begin %q", out.String(), tc.out)
			}
		})
	}
}
