package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
)

// TestExperimentFlagRanges checks that a count the operator typed as 0 or
// less is a usage error naming the flag, not a silent run of the default
// grid. The context is cancelled, so that a command that wrongly accepts its
// flags stops at once instead of running an experiment.
func TestExperimentFlagRanges(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bai", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"bai", "--runs", "-3"}, "--runs -3: must be at least 1"},
		{[]string{"bai", "--workers", "0"}, "--workers 0: must be at least 1"},
		{[]string{"bai", "--problem", "0"}, "--problem 0: the paper has problems 1 and 2"},
		{[]string{"bai", "--problem", "3"}, "--problem 3"},
		{[]string{"pfcb", "--rounds", "0"}, "--rounds 0: must be at least 1"},
		{[]string{"pfcb", "--rounds", "-100"}, "--rounds -100: must be at least 1"},
		{[]string{"pfcb", "--instances", "0"}, "--instances 0: must be at least 1"},
		{[]string{"pfcb", "--instances", "-1"}, "--instances -1: must be at least 1"},
		{[]string{"pfcb", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"pfcb", "--workers", "-2"}, "--workers -2: must be at least 1"},
		{[]string{"mpccb", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"mpccb", "--steps", "0"}, "--steps 0: must be at least 1"},
		{[]string{"mpccb", "--steps", "50"}, "--steps 50: must be within 100..60000"},
		{[]string{"mpccb", "--steps", "60001"}, "--steps 60001: must be within 100..60000"},
		{[]string{"mpccb", "--timing-steps", "0"}, "--timing-steps 0: must be at least 1"},
		{[]string{"mpccb", "--timing-repeats", "-1"}, "--timing-repeats -1: must be at least 1"},
		{[]string{"mpccb", "--workers", "0", "--quick"}, "--workers 0: must be at least 1"},
		{[]string{"samba", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"samba", "--budget", "0"}, "--budget 0: must be at least 1"},
		{[]string{"samba", "--workers", "-1"}, "--workers -1: must be at least 1"},
		{[]string{"samba", "--paillier-bits", "0"}, "--paillier-bits 0: must be at least 1"},
		{[]string{"samba", "--k", "1"}, `--k "1": "1" is not a number of arms (at least 2)`},
		{[]string{"samba", "--k", "10,x"}, `--k "10,x": "x" is not a number of arms`},
		{[]string{"samba", "--shard", "0/4"}, "--shard: shard 0/4: i counts from 1 to n (4)"},
		{[]string{"bai", "--shard", "5/4"}, "--shard: shard 5/4: i counts from 1 to n"},
		{[]string{"mpccb", "--shard", "2"}, `--shard: shard "2": want i/n`},
		{[]string{"pfcb", "--shard", "1/2", "--sensitivity"}, "the sensitivity study runs whole"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			args := append([]string{"experiment"}, tt.args...)
			args = append(args, "--out", t.TempDir(), "--quiet")
			err := Run(ctx, args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
				t.Errorf("err = %v (exit %d), want a usage error with %q", err, ExitCode(err), tt.want)
			}
		})
	}
}

// TestExperimentFlagsAccepted checks that valid counts pass the checks: the
// cancelled context is the first thing the experiment meets.
func TestExperimentFlagsAccepted(t *testing.T) {
	for _, args := range [][]string{
		{"bai", "--runs", "1", "--agents", "64", "--workers", "1", "--problem", "2"},
		{"bai"},
		{"pfcb", "--rounds", "1000", "--instances", "1", "--runs", "1", "--workers", "1"},
		{"pfcb"},
		{"samba", "--runs", "1", "--budget", "500", "--k", "3,5", "--workers", "1", "--paillier-bits", "512"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			args := append(append([]string{"experiment"}, args...), "--out", filepath.Join(t.TempDir(), "out"), "--quiet")
			if err := Run(ctx, args, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled (the flags accepted)", err)
			}
		})
	}
}

// TestExperimentSAMBA runs a small SAMBA experiment through the command: the
// claims printed, every session exact, the files written; and a dataset
// file with a bad line is refused naming the line.
func TestExperimentSAMBA(t *testing.T) {
	out := filepath.Join(t.TempDir(), "samba")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"experiment", "samba", "--out", out, "--runs", "1", "--budget", "40", "--k", "3",
		"--paillier-bits", "512", "--workers", "1"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "holds         Theorem 2: SAMBA returns exactly") || !strings.Contains(stdout.String(), "samba_results.md") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "[18/18] ") || strings.Contains(stderr.String(), "NOT EXACT") {
		t.Errorf("progress:\n%s", stderr.String())
	}
	checkManifest(t, out, "samba", map[string]string{"seed": "1", "runs": "1", "budget": "40", "tau": "0"})
	bad := filepath.Join(t.TempDir(), "arms.txt")
	if err := os.WriteFile(bad, []byte("0.5\n0.2\n0,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), []string{"experiment", "samba", "--out", out, "--dataset", bad, "--k", "2", "--quiet"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `line 3: "0,3" is not a number`) {
		t.Errorf("err = %v, want the bad line named", err)
	}
}

// TestExperimentSAMBARan: the summary line says what the SAMBA experiment
// ran — its secure sessions, the batched plaintext reference's runs behind
// --batch (6 algorithms × B ∈ {1, 10} × runs; the secure grid is 6
// algorithms × N ∈ {10, 20, 40}), or those alone with
// --batch-only, which simulates no secure session.
func TestExperimentSAMBARan(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"secure", []string{"--k", "3"}, "18 sessions simulated in "},
		{"with batches", []string{"--k", "3", "--batch", "10"}, "18 sessions simulated and 12 runs of the batched plaintext reference in "},
		{"batch only", []string{"--k", "3", "--batch", "10", "--batch-only"}, "12 runs of the batched plaintext reference (no secure session simulated) in "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"experiment", "samba", "--out", t.TempDir(), "--runs", "1", "--budget", "40",
				"--paillier-bits", "512", "--workers", "1", "--quiet"}, tc.args...)
			if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.want) {
				t.Errorf("stdout begins %q, want %q:\n%s", strings.SplitN(stdout.String(), "\n", 2)[0], tc.want, stdout.String())
			}
		})
	}
}

// TestExperimentMerge runs a small SAMBA grid as 2 shards through the
// command and merges them: every session once in the merged runs, the
// merge's manifest naming each partial with its manifest's SHA-256; and a
// merge missing a shard is refused.
func TestExperimentMerge(t *testing.T) {
	root := t.TempDir()
	grid := []string{"--runs", "1", "--budget", "40", "--k", "3", "--paillier-bits", "512", "--workers", "1", "--quiet"}
	var parts []string
	for _, sh := range []string{"1/2", "2/2"} {
		dir := filepath.Join(root, "part"+sh[:1])
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), append([]string{"experiment", "samba", "--out", dir, "--shard", sh}, grid...), &stdout, &stderr); err != nil {
			t.Fatalf("shard %s: %v\n%s", sh, err, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "samba_runs.csv")); err == nil {
			t.Errorf("shard %s wrote samba_runs.csv; a shard writes only its partial output", sh)
		}
		parts = append(parts, dir)
	}
	out := filepath.Join(root, "merged")
	var stdout bytes.Buffer
	if err := Run(context.Background(), append([]string{"experiment", "merge", "--out", out}, parts...), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "samba_runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(b), "\n"); rows != 19 {
		t.Errorf("samba_runs.csv: %d lines, want a header and 18 sessions", rows)
	}
	if !strings.Contains(stdout.String(), "holds         Theorem 2: SAMBA returns exactly") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	mb, err := os.ReadFile(filepath.Join(out, experiment.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m experiment.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	if m.Experiment != "samba" || len(m.Partials) != 2 {
		t.Fatalf("merged manifest: experiment %q, partials %+v", m.Experiment, m.Partials)
	}
	for i, p := range m.Partials {
		pb, err := os.ReadFile(filepath.Join(parts[i], experiment.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(pb)
		if p.Dir != parts[i] || p.ManifestSHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("partial %d: %+v, want %s with its manifest's SHA-256", i, p, parts[i])
		}
	}
	err = Run(context.Background(), []string{"experiment", "merge", "--out", filepath.Join(root, "m2"), parts[1]}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "shard 1/2 missing") {
		t.Errorf("err = %v, want shard 1/2 missing", err)
	}
	err = Run(context.Background(), []string{"experiment", "merge", "--out", filepath.Join(root, "m3")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "wrong number of arguments (0)") || ExitCode(err) != 2 {
		t.Errorf("err = %v, want a usage error: no partials", err)
	}
}

// checkManifest checks the manifest an experiment wrote into out: the
// experiment, the command, the options as run (defaults too), the Go
// runtime's parallelism and host, and every other file of out listed with
// its true size and SHA-256.
func checkManifest(t *testing.T, out, name string, options map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, experiment.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m experiment.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Program != "bandit-lab" || m.Experiment != name || len(m.Command) < 3 || m.Command[2] != name ||
		m.GOMAXPROCS < 1 || m.Host.CPUs < 1 || m.Build.GoVersion == "" || m.Finished.Before(m.Started) {
		t.Errorf("manifest %s", b)
	}
	for k, v := range options {
		if m.Options[k] != v {
			t.Errorf("manifest option %s = %q, want %q", k, m.Options[k], v)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]experiment.WrittenFile{}
	for _, f := range m.Files {
		listed[f.Name] = f
	}
	for _, e := range entries {
		if e.Name() == experiment.ManifestFile {
			continue
		}
		f, ok := listed[e.Name()]
		data, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if !ok || f.Bytes != int64(len(data)) || f.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: listed %v as %+v; want its size %d and SHA-256", e.Name(), ok, f, len(data))
		}
	}
}
