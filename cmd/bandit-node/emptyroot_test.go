//go:build linux

package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
)

// image is what deploy/Dockerfile puts in its FROM scratch image.
type image struct {
	binary   string   // where COPY puts the binary, e.g. /bandit-node
	dataDir  string   // the VOLUME, e.g. /data
	uid, gid uint32   // USER
	env      []string // ENV
	workDir  string   // WORKDIR
	// buildFlags are the flags of the `CGO_ENABLED=0 go build` command
	// the Dockerfile's comment gives, without -o.
	buildFlags []string
}

// readDockerfile reads the instructions the test imitates from the
// Dockerfile, and checks they agree with each other.
func readDockerfile(t *testing.T, path string) image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var img image
	var from, entrypoint, dataOwner string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cmd, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(line, "#")), "CGO_ENABLED=0 go build "); ok {
			for f := strings.Fields(cmd); len(f) > 0 && f[0] != "./cmd/bandit-node"; f = f[1:] {
				if f[0] == "-o" {
					f = f[1:]
					continue
				}
				img.buildFlags = append(img.buildFlags, f[0])
			}
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		args := strings.Fields(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			from = rest
		case "COPY":
			if strings.HasPrefix(args[0], "--chown=") {
				dataOwner = strings.TrimPrefix(args[0], "--chown=")
				continue
			}
			if args[0] == "bandit-node" {
				img.binary = args[1]
			}
		case "VOLUME":
			img.dataDir = rest
		case "WORKDIR":
			img.workDir = rest
		case "ENV":
			img.env = append(img.env, args...)
		case "USER":
			u, g, ok := strings.Cut(rest, ":")
			uid, uerr := strconv.ParseUint(u, 10, 32)
			gid, gerr := strconv.ParseUint(g, 10, 32)
			if !ok || uerr != nil || gerr != nil {
				t.Fatalf("Dockerfile: USER %s: want numeric uid:gid (scratch has no /etc/passwd)", rest)
			}
			img.uid, img.gid = uint32(uid), uint32(gid)
		case "ENTRYPOINT":
			var ep []string
			if err := json.Unmarshal([]byte(rest), &ep); err != nil || len(ep) == 0 {
				t.Fatalf("Dockerfile: ENTRYPOINT %s: want the exec form", rest)
			}
			entrypoint = ep[0]
		}
	}
	switch {
	case !slices.Contains(img.buildFlags, "timetzdata"):
		t.Fatalf("Dockerfile: the build command's flags %q lack -tags timetzdata, or there is no `CGO_ENABLED=0 go build` line", img.buildFlags)
	case from != "scratch":
		t.Fatalf("Dockerfile: FROM %s, want scratch", from)
	case img.binary == "" || entrypoint != img.binary:
		t.Fatalf("Dockerfile: the binary is copied to %q, the ENTRYPOINT runs %q", img.binary, entrypoint)
	case img.dataDir == "" || img.workDir != img.dataDir:
		t.Fatalf("Dockerfile: VOLUME %q, WORKDIR %q: want the data directory for both", img.dataDir, img.workDir)
	case img.uid == 0:
		t.Fatal("Dockerfile: USER is root")
	case dataOwner != fmt.Sprintf("%d:%d", img.uid, img.gid):
		t.Fatalf("Dockerfile: the data directory is copied with owner %q, not the USER %d:%d", dataOwner, img.uid, img.gid)
	}
	return img
}

// checkStatic fails the test unless bin is a static executable: no
// program interpreter (dynamic loader), no shared library needed.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s has a program interpreter (PT_INTERP): it is not static", bin)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Fatalf("%s needs shared libraries %v: it is not static", bin, libs)
	}
}

// TestEmptyRoot proves what deploy/Dockerfile's image relies on, without
// Docker: the binary built with CGO_ENABLED=0 is static, and alone in an
// empty root directory, with only the data directory beside it, as the
// Dockerfile's non-root user, it runs init, run (restarting itself for
// [runtime] schedtrace) and a ping session with a daemon outside the root,
// over loopback; the session is started from inside by the CLI, as
// `docker exec` would.
func TestEmptyRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts two daemons")
	}
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root (CAP_SYS_CHROOT), and so does running the child as the Dockerfile's user")
	}
	img := readDockerfile(t, filepath.Join("..", "..", "deploy", "Dockerfile"))
	dir := t.TempDir()
	bin := buildBinary(t, []string{"CGO_ENABLED=0"}, img.buildFlags...)
	checkStatic(t, bin)

	// The image: the binary and an empty data directory owned by USER.
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(img.binary)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, img.binary), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, img.dataDir)
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, int(img.uid), int(img.gid)); err != nil {
		t.Fatal(err)
	}
	// inside runs the image's binary in the root, as a container would:
	// its user, its working directory, its environment and nothing else.
	inside := func(args ...string) *exec.Cmd {
		cmd := exec.Command(img.binary, args...)
		cmd.Path = img.binary // looked up inside the root, not here
		cmd.Dir = img.workDir
		cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, img.env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Chroot:     root,
			Credential: &syscall.Credential{Uid: img.uid, Gid: img.gid, Groups: []uint32{}},
		}
		return cmd
	}
	out, err := inside("version").CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("chroot is not permitted here: %v", err)
	}
	if err != nil || !strings.HasPrefix(string(out), "bandit-node ") {
		t.Fatalf("version in the empty root: %v\n%s", err, out)
	}

	ports := map[int]bool{}
	port := func() int {
		p := testutil.FreePort(t)
		for ports[p] {
			p = testutil.FreePort(t)
		}
		ports[p] = true
		return p
	}
	type daemon struct {
		name, config, id string
		p2p              int
	}
	in := daemon{name: "contained", config: filepath.Join(img.dataDir, "config.toml"), p2p: port()}
	outDir := filepath.Join(dir, "outside")
	out2 := daemon{name: "outside", config: filepath.Join(outDir, "config.toml"), p2p: port()}
	initArgs := func(d daemon, dir string) []string {
		return []string{"init", "--dir", dir, "--name", d.name, "--policy-open",
			"--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", d.p2p), "--listen", fmt.Sprintf("/ip4/127.0.0.1/udp/%d/quic-v1", d.p2p),
			"--api", fmt.Sprintf("127.0.0.1:%d", port())}
	}
	// init prints the peer ID on stdout, what to do next on stderr.
	if out, err = inside(initArgs(in, img.dataDir)...).Output(); err != nil {
		t.Fatalf("init in the empty root: %v\n%s", err, stderrOf(err))
	}
	in.id = strings.TrimSpace(string(out))
	if out, err = exec.Command(bin, initArgs(out2, outDir)...).Output(); err != nil {
		t.Fatalf("init outside: %v\n%s", err, stderrOf(err))
	}
	out2.id = strings.TrimSpace(string(out))
	for _, p := range []struct {
		cfg   string
		other daemon
	}{{filepath.Join(root, in.config), out2}, {out2.config, in}} {
		f, err := os.OpenFile(p.cfg, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\n[[peers]]\nname = %q\npeer_id = %q\naddrs = [\"/ip4/127.0.0.1/tcp/%d\"]\n", p.other.name, p.other.id, p.other.p2p)
		f.Close()
	}

	runIn := inside("run", "--config", in.config)
	// A zone with neither DST nor a zero offset: the daemon's local time
	// (its log, standing sessions' `at`) must follow TZ in an image
	// without /usr/share/zoneinfo.
	runIn.Env = append(runIn.Env, "TZ=Asia/Kolkata")
	runOut := exec.Command(bin, "run", "--config", out2.config)
	runOut.Env = environWithout("GODEBUG", "NOTIFY_SOCKET")
	inLog := startDaemon(t, runIn)
	startDaemon(t, runOut)

	// Inside, the daemon restarted itself for schedtrace with no
	// /proc/self/exe to find itself by, and started.
	var runtimeLine string
	var logged []string
	for started := false; !started; {
		select {
		case l, ok := <-inLog:
			if !ok {
				t.Fatalf("the daemon in the empty root exited before it started: %v\n%s", runIn.Wait(), strings.Join(logged, "\n"))
			}
			logged = append(logged, l)
			if strings.Contains(l, `msg="go runtime"`) {
				runtimeLine = l
			}
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Errorf("the daemon in the empty root: %s", l)
			}
			started = strings.Contains(l, `msg="node started"`)
			if started && !strings.Contains(l, "+05:30 ") {
				t.Errorf("the daemon in the empty root ignores TZ=Asia/Kolkata: %s", l)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the daemon in the empty root did not start within 30 s")
		}
	}
	if !strings.Contains(runtimeLine, "schedtrace=true") {
		t.Errorf("the daemon in the empty root runs without schedtrace: %s", runtimeLine)
	}
	go func() {
		for l := range inLog {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Logf("the daemon in the empty root: %s", l)
			}
		}
	}()

	// The outside daemon sees the contained one, and its version.
	version, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantVersion := strings.Fields(string(version))[1]
	testutil.WaitFor(t, 30*time.Second, "the outside daemon to connect to the contained one", func() bool {
		out, err := exec.Command(bin, "peers", "--config", out2.config, "--json").Output()
		var peers []apitype.Peer
		return err == nil && json.Unmarshal(out, &peers) == nil && len(peers) == 1 && peers[0].Connected && peers[0].Agent != ""
	})
	table, err := exec.Command(bin, "peers", "--config", out2.config).Output()
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(table), "\n"); len(lines) < 2 || !strings.Contains(lines[0], "VERSION") ||
		!strings.Contains(lines[1], "contained") || !strings.Contains(lines[1], wantVersion) {
		t.Errorf("peers does not show the contained daemon's version %s:\n%s", wantVersion, table)
	}

	// A ping session, started by the CLI inside the root.
	spec := filepath.Join(img.dataDir, "ping.toml")
	if err := os.WriteFile(filepath.Join(root, spec), []byte(
		"protocol = \"ping\"\n[roles]\nparticipant = [\"contained\", \"outside\"]\n[params]\ncount = 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Bounded: a session that never ends fails the test in two minutes
	// (exit code 4) instead of hanging until the package's timeout.
	start := inside("session", "start", "--config", in.config, spec, "--wait", "--timeout", "2m", "--json")
	var stderr strings.Builder
	start.Stderr = &stderr
	out, err = start.Output()
	if err != nil {
		t.Fatalf("session start in the empty root: %v\n%s", err, stderr.String())
	}
	res := testutil.DecodeJSON[apitype.Result](t, out)
	if res.Session.State != apitype.StateCompleted || !strings.Contains(string(res.Result), "median_us") {
		t.Fatalf("the ping session did not complete: %+v", res)
	}

	for _, d := range []*exec.Cmd{runIn, runOut} {
		stopDaemon(t, d)
	}
}

// stderrOf returns the standard error that exec.Cmd.Output kept in err.
func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}

// startDaemon starts cmd, which is to log on stderr, and returns its log
// lines; the daemon is killed at cleanup if still running.
func startDaemon(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return logLines(stderr)
}

// stopDaemon sends cmd SIGTERM and waits for it to exit cleanly.
func stopDaemon(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s did not stop cleanly on SIGTERM: %v", strings.Join(cmd.Args, " "), err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%s did not stop within 30 s of SIGTERM", strings.Join(cmd.Args, " "))
	}
}
