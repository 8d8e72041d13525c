package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shard is one of Count deterministic slices of an experiment's grid:
// shard Index (1 ≤ Index ≤ Count, counted from 1, as Slurm's array
// indices 1-N and `seq 1 N` are) runs the jobs whose position i in the
// grid's job order — the order the unsharded run uses — has
// i mod Count = Index − 1. The zero Shard is the whole grid.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard parses "i/n" (1 ≤ i ≤ n).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 1/4 (i from 1 to n)", s)
	}
	sh := Shard{Index: i, Count: n}
	return sh, sh.Validate()
}

// Validate reports whether s is the whole grid or a shard 1 ≤ i ≤ n.
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 {
		return fmt.Errorf("shard %d/%d: n must be at least 1", s.Index, s.Count)
	}
	if s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("shard %d/%d: i counts from 1 to n (%d); a 0-based index such as $SLURM_ARRAY_TASK_ID from 0 or $JOB_COMPLETION_INDEX needs +1", s.Index, s.Count, s.Count)
	}
	return nil
}

// Whole reports whether s is the whole grid (the zero Shard or 1/1).
func (s Shard) Whole() bool { return s.Count <= 1 }

// String is "i/n", or "all" for the whole grid.
func (s Shard) String() string {
	if s == (Shard{}) {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Jobs returns the positions, among n jobs, that s runs, in order.
func (s Shard) Jobs(n int) []int {
	var out []int
	for i := range n {
		if s.Whole() || i%s.Count == s.Index-1 {
			out = append(out, i)
		}
	}
	return out
}

// PartialFile is the name of the partial output a shard writes into its
// output directory (beside its manifest.json).
const PartialFile = "partial.json"

// Partial is a shard's output: what defines the grid, the shard, and each
// of its jobs' full result. Float64 values survive encoding/json exactly,
// so a merge renders the same files the unsharded run does.
type Partial struct {
	// Experiment names the experiment ("samba").
	Experiment string `json:"experiment"`
	// Grid is every option that defines the grid — all but the workers,
	// the progress and the output directory —, as the experiment resolved
	// it (defaults included); partials merge only when theirs are equal.
	Grid json.RawMessage `json:"grid"`
	// Shard is the slice run; Jobs the number of jobs in the whole grid.
	Shard Shard `json:"shard"`
	Jobs  int   `json:"jobs"`
	// Command is the command line, --shard left out; Workers the
	// parallel workers; Elapsed the seconds the shard's jobs took;
	// LoadAverage the machine's at the end.
	Command        string  `json:"command"`
	Workers        int     `json:"workers"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	LoadAverage    string  `json:"load_average,omitempty"`
	// Results are the shard's jobs' results, by position in the grid.
	Results []PartialResult `json:"results"`
	// Extra is what one shard alone produces besides its jobs (mpccb's
	// shard 1: the measurements that must come from one machine).
	Extra json.RawMessage `json:"extra,omitempty"`
}

// PartialResult is one job's result and its position in the grid's order.
type PartialResult struct {
	Job    int             `json:"job"`
	Result json.RawMessage `json:"result"`
}

// NewPartial begins the partial of experiment's shard of a grid of jobs
// defined by grid (marshalled to JSON).
func NewPartial(experiment string, grid any, shard Shard, jobs int) (*Partial, error) {
	g, err := json.Marshal(grid)
	if err != nil {
		return nil, fmt.Errorf("the grid's options: %w", err)
	}
	return &Partial{Experiment: experiment, Grid: g, Shard: shard, Jobs: jobs}, nil
}

// Add records the result of the job at position job.
func (p *Partial) Add(job int, result any) error {
	b, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("job %d's result: %w", job, err)
	}
	p.Results = append(p.Results, PartialResult{Job: job, Result: b})
	return nil
}

// Write writes p as dir/partial.json and returns its path.
func (p *Partial) Write(dir string) (string, error) {
	b, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		return "", fmt.Errorf("the partial output: %w", err)
	}
	path := filepath.Join(dir, PartialFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing the partial output: %w", err)
	}
	return path, nil
}

// Merged is what a set of partials hold together.
type Merged struct {
	// Experiment and Grid are the partials' (equal in all).
	Experiment string
	Grid       json.RawMessage
	// Results are every job's result, in the grid's order.
	Results []json.RawMessage
	// Command is the first shard's command line; Workers the sum of the
	// shards' workers; Elapsed the sum of their elapsed times (the CPU
	// budget the grid took, not the wall time of the slowest shard);
	// LoadAverage their load averages, "; " between.
	Command     string
	Workers     int
	Elapsed     time.Duration
	LoadAverage string
	// Extra is the first shard's (by index) that has one.
	Extra json.RawMessage
	// Sources are the partial directories, each with the SHA-256 of its
	// manifest.json.
	Sources []MergedSource
}

// MergedSource names one partial output a merge read.
type MergedSource struct {
	Dir            string `json:"dir"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Shard          string `json:"shard"`
}

// ReadPartials reads the partial outputs in dirs (each holding
// partial.json and manifest.json) and checks that they are the shards of
// one run of one grid: the same experiment and grid options, the same
// number of shards, every shard once, every job once.
func ReadPartials(dirs []string) (*Merged, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no partial output directories given")
	}
	var parts []*Partial
	m := &Merged{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, PartialFile))
		if err != nil {
			return nil, fmt.Errorf("merge: %s is not a shard's output (run with --shard i/n): %w", d, err)
		}
		p := &Partial{}
		if err := json.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("merge: %s: %w", filepath.Join(d, PartialFile), err)
		}
		mb, err := os.ReadFile(filepath.Join(d, ManifestFile))
		if err != nil {
			return nil, fmt.Errorf("merge: %s: the shard's manifest: %w", d, err)
		}
		sum := sha256.Sum256(mb)
		m.Sources = append(m.Sources, MergedSource{Dir: d, ManifestSHA256: hex.EncodeToString(sum[:]), Shard: p.Shard.String()})
		parts = append(parts, p)
	}
	first := parts[0]
	seen := map[int]string{}
	for i, p := range parts {
		d := dirs[i]
		if p.Experiment != first.Experiment {
			return nil, fmt.Errorf("merge: %s is experiment %q, %s is %q: partials of different experiments", d, p.Experiment, dirs[0], first.Experiment)
		}
		if !bytes.Equal(p.Grid, first.Grid) {
			return nil, fmt.Errorf("merge: %s and %s ran different grids (their options differ: %s against %s)", d, dirs[0], p.Grid, first.Grid)
		}
		if p.Shard.Count != first.Shard.Count || p.Jobs != first.Jobs {
			return nil, fmt.Errorf("merge: %s is shard %s of %d jobs, %s shard %s of %d: not the same split", d, p.Shard, p.Jobs, dirs[0], first.Shard, first.Jobs)
		}
		if err := p.Shard.Validate(); err != nil || p.Shard.Whole() {
			return nil, fmt.Errorf("merge: %s: shard %s is not one of several", d, p.Shard)
		}
		if o, dup := seen[p.Shard.Index]; dup {
			return nil, fmt.Errorf("merge: shard %s twice: %s and %s", p.Shard, o, d)
		}
		seen[p.Shard.Index] = d
	}
	var missing []string
	for i := 1; i <= first.Shard.Count; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, first.Shard.Count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shard %s missing (%d of %d given)", strings.Join(missing, ", "), len(seen), first.Shard.Count)
	}
	m.Experiment, m.Grid = first.Experiment, first.Grid
	m.Results = make([]json.RawMessage, first.Jobs)
	var loads []string
	order := slices.Clone(parts)
	slices.SortFunc(order, func(a, b *Partial) int { return a.Shard.Index - b.Shard.Index })
	m.Command = order[0].Command
	for _, p := range order {
		want := p.Shard.Jobs(p.Jobs)
		if len(p.Results) != len(want) {
			return nil, fmt.Errorf("merge: shard %s holds %d results, want %d", p.Shard, len(p.Results), len(want))
		}
		for _, r := range p.Results {
			if r.Job < 0 || r.Job >= p.Jobs || r.Job%p.Shard.Count != p.Shard.Index-1 {
				return nil, fmt.Errorf("merge: shard %s holds job %d, not one of its own", p.Shard, r.Job)
			}
			if m.Results[r.Job] != nil {
				return nil, fmt.Errorf("merge: job %d twice in shard %s", r.Job, p.Shard)
			}
			m.Results[r.Job] = r.Result
		}
		m.Workers += p.Workers
		m.Elapsed += time.Duration(p.ElapsedSeconds * float64(time.Second))
		if m.Extra == nil && len(p.Extra) > 0 {
			m.Extra = p.Extra
		}
		if p.LoadAverage != "" {
			loads = append(loads, p.LoadAverage)
		}
	}
	m.LoadAverage = strings.Join(loads, "; ")
	return m, nil
}

// Decode unmarshals every result of m into a T, in the grid's order.
func Decode[T any](m *Merged) ([]T, error) {
	out := make([]T, len(m.Results))
	for i, r := range m.Results {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("merge: job %d's result: %w", i, err)
		}
	}
	return out, nil
}
