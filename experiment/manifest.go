package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/internal/buildinfo"
)

// ManifestFile is the name of the manifest an experiment writes into its
// output directory.
const ManifestFile = "manifest.json"

// Manifest says what produced an experiment's output directory, so that a
// reviewer can tell which build, command, seeds and machine made each
// figure and CSV file, and check that the files are the ones it made.
type Manifest struct {
	// Program and Experiment name the command ("bandit-lab") and the
	// experiment ("samba").
	Program    string `json:"program"`
	Experiment string `json:"experiment"`
	// Build is the binary's version, VCS revision and time, and Go
	// version; a build from a modified work tree says so.
	Build buildinfo.Info `json:"build"`
	// Command is the command line; Options every option's value as the
	// run took it, the defaults included (the seed, the runs, …).
	Command []string          `json:"command"`
	Options map[string]string `json:"options"`
	// GOMAXPROCS is the Go runtime's, which sets the default parallelism.
	GOMAXPROCS int `json:"gomaxprocs"`
	// Started and Finished bound the run.
	Started        time.Time `json:"started"`
	Finished       time.Time `json:"finished"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	Host           Host      `json:"host"`
	// Partials, in a merge's manifest, are the shards' outputs it read,
	// each with the SHA-256 of its manifest.
	Partials []MergedSource `json:"partials,omitempty"`
	// Files are the files the run wrote, with their sizes and SHA-256.
	Files []WrittenFile `json:"files"`
}

// Host describes the machine an experiment ran on.
type Host struct {
	Name     string `json:"name"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model,omitempty"`
	// LoadAverage is the 1, 5 and 15-minute load averages at the end
	// (Linux), a sign of other work that shared the machine.
	LoadAverage string `json:"load_average,omitempty"`
}

// WrittenFile is one file of an output directory.
type WrittenFile struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// NewManifest begins the manifest of a run of experiment started now, by
// command with options.
func NewManifest(program, experiment string, command []string, options map[string]string) Manifest {
	return Manifest{Program: program, Experiment: experiment, Build: buildinfo.Read(""), Command: command,
		Options: options, GOMAXPROCS: runtime.GOMAXPROCS(0), Started: time.Now().UTC()}
}

// Write ends the manifest and writes it as dir/name (atomically; name is
// ManifestFile unless a second experiment shares the directory), listing
// files — paths, as the experiment returned them, named relative to dir —
// with their sizes and SHA-256.
func (m Manifest) Write(dir, name string, files []string) error {
	m.Finished = time.Now().UTC()
	m.ElapsedSeconds = m.Finished.Sub(m.Started).Seconds()
	host, _ := os.Hostname()
	m.Host = Host{Name: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), CPUModel: cpuModel(), LoadAverage: LoadAverage()}
	m.Files = nil
	for _, f := range files {
		wf, err := hashFile(f)
		if err != nil {
			return fmt.Errorf("the manifest: %w", err)
		}
		if rel, err := filepath.Rel(dir, f); err == nil && !strings.HasPrefix(rel, "..") {
			wf.Name = rel
		}
		m.Files = append(m.Files, wf)
	}
	slices.SortFunc(m.Files, func(a, b WrittenFile) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the manifest: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing the manifest: %w", err)
	}
	return nil
}

// hashFile returns a file's size and SHA-256.
func hashFile(path string) (WrittenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return WrittenFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return WrittenFile{}, err
	}
	return WrittenFile{Name: path, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// cpuModel reads the processor's name on Linux, or returns "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
