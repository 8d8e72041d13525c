//go:build unix

package environment

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecCloseStopsGroup: Close stops what the program started too (its
// process group).
func TestExecCloseStopsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := testExecConfig(envprog("-mode=child")...)
	cfg.Env = []string{"ENVPROG_CHILD_PID=" + pidFile}
	e := newTestExec(t, cfg)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if gone(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the program's child %d still runs after Close", pid)
}

// gone reports whether process pid has ended: it does not exist, or is
// a zombie its new parent has not reaped yet.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
