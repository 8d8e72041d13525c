package pattern

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// childEnv makes the test binary serve one party of RunProcesses.
const childEnv = "BANDIT_PATTERN_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := ServeChild(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRunInProcess(t *testing.T) {
	for _, transport := range []string{TransportTCP, TransportQUIC} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := RunInProcess(ctx, Config{K: 3, Steps: 50, Warmup: 5, Transport: transport})
			if err != nil {
				t.Fatal(err)
			}
			if res.K != 3 || res.Steps != 50 || res.FramesPerStep != 8 || res.Transport != transport {
				t.Errorf("result %+v, want K 3, 50 steps, 8 frames a step over %s", res, transport)
			}
			if res.Seconds <= 0 || res.MsPerStep <= 0 {
				t.Errorf("no time measured: %+v", res)
			}
		})
	}
}

func TestRunProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 4 processes")
	}
	t.Setenv(childEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunProcesses(ctx, Config{K: 2, Steps: 100, Warmup: 10}, ProcessOptions{Command: []string{os.Args[0]}, OwnerProcs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 100 || res.FramesPerStep != 6 {
		t.Errorf("result %+v, want 100 steps of 6 frames", res)
	}
	for _, role := range []string{RoleController, RoleComp, RoleOwner} {
		if res.CPUSeconds[role] <= 0 {
			t.Errorf("no CPU time reported for %s: %v", role, res.CPUSeconds)
		}
		// The timed steps are a part of the processes' lives: not all of
		// it (start, connections and warm-up come first), not nothing.
		if steps := res.StepsCPUSeconds[role]; steps <= 0 || steps >= res.CPUSeconds[role] {
			t.Errorf("%s: %v CPU seconds during the steps, of %v in all", role, steps, res.CPUSeconds[role])
		}
	}
}

func TestRunProcessesReportsAFailingChild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := RunProcesses(ctx, Config{K: 1, Steps: 1}, ProcessOptions{Command: []string{"/bin/false"}})
	if err == nil {
		t.Fatal("a run whose party processes exit at once succeeded")
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{K: 0, Steps: 1}, "K must be at least 1"},
		{Config{K: 1, Steps: 0}, "steps must be at least 1"},
		{Config{K: 1, Steps: 1, Warmup: -1}, "negative warm-up"},
		{Config{K: 1, Steps: 1, ScoreSize: -1}, "frame sizes"},
		{Config{K: 1 << 20, Steps: 1, ScoreSize: 100}, "frame sizes"},
		{Config{K: 1, Steps: 1, BitItemSize: -1}, "frame sizes"},
		{Config{K: 1 << 20, Steps: 1, ScoreItemSize: 1 << 62}, "frame sizes"},
		{Config{K: 1, Steps: 1, Transport: "ws"}, "transport must be"},
	}
	for _, tc := range tests {
		_, err := tc.cfg.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.cfg, err, tc.want)
		}
	}
}

// BenchmarkInProcess runs the pattern (K = 10) with every host in this
// process, b.N timed steps, and reports ms/step.
func BenchmarkInProcess(b *testing.B) {
	res, err := RunInProcess(b.Context(), Config{K: 10, Steps: max(b.N, 1), Warmup: DefaultWarmup})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(res.MsPerStep, "ms/step")
}

// TestRunProcessesDialsTheRoutes checks ProcessOptions.Routes: with every
// party reaching every other at a listener that accepts and hangs up (a
// link that is down), the run fails, and the listener saw the dials, so the
// parties used the routes rather than the addresses they reported.
func TestRunProcessesDialsTheRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 processes")
	}
	t.Setenv(childEnv, "1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var dials atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	routes := map[Route]string{}
	for from := range 3 {
		for to := range 3 {
			if from != to {
				routes[Route{from, to}] = "/ip4/127.0.0.1/tcp/" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = RunProcesses(ctx, Config{K: 1, Steps: 10, Warmup: 1}, ProcessOptions{Command: []string{os.Args[0]}, Routes: routes})
	if err == nil {
		t.Fatal("the run succeeded though every route leads to a listener that hangs up")
	}
	if dials.Load() == 0 {
		t.Fatalf("the run failed (%v) without dialing a route", err)
	}
	t.Logf("failed as it must: %v (%d dials)", err, dials.Load())
}

// TestRunProcessesRejectsABadRoute checks that a route names existing parties.
func TestRunProcessesRejectsABadRoute(t *testing.T) {
	t.Setenv(childEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := RunProcesses(ctx, Config{K: 1, Steps: 1}, ProcessOptions{Command: []string{os.Args[0]},
		Routes: map[Route]string{{0, 3}: "/ip4/127.0.0.1/tcp/1"}})
	if err == nil || !strings.Contains(err.Error(), "parties are 0 … 2") {
		t.Fatalf("error %v, want one naming the parties", err)
	}
}
