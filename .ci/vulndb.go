//go:build ignore

// Command vulndb writes a Go vulnerability database, in the v1 format that
// vuln.go.dev serves and govulncheck -db file://DIR reads, from the OSV files
// of the golang.org/x/vulndb module (its data/osv directory). .ci/vulncheck
// runs it:
//
//	go run .ci/vulndb.go -osv $(x/vulndb)/data/osv -out DIR -modified TIME
//
// It writes what x/vulndb's own cmd/indexdb writes (index/db.json,
// index/modules.json, index/vulns.json, ID/GO-*.json, each also gzipped), with
// the standard library alone: indexdb builds in about 75 s on a fresh
// machine (it compiles x/vulndb's Cloud and git dependencies), this in a few.
// Checked on x/vulndb v0.0.0-20261105234957-e22db6528018: without -modified
// the directories are identical, byte for byte. Check again when .ci/vulncheck
// takes a newer x/vulndb (V its version, X its directory):
//
//	go run golang.org/x/vulndb/cmd/indexdb@V -vulns X/data/osv -out /tmp/a
//	go run .ci/vulndb.go -osv X/data/osv -out /tmp/b && diff -r /tmp/a /tmp/b
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is the part of an OSV entry the indexes are made of.
type entry struct {
	ID       string   `json:"id"`
	Modified string   `json:"modified"`
	Aliases  []string `json:"aliases"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Introduced string `json:"introduced"`
				Fixed      string `json:"fixed"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

// moduleVuln, module and vuln are the index entries, in the field order and
// with the omissions of x/vulndb's internal/database.
type moduleVuln struct {
	ID       string `json:"id"`
	Modified string `json:"modified"`
	Fixed    string `json:"fixed,omitempty"`
}

type module struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vuln struct {
	ID       string   `json:"id"`
	Modified string   `json:"modified"`
	Aliases  []string `json:"aliases,omitempty"`
}

func main() {
	osvDir := flag.String("osv", "", "directory of OSV JSON files (x/vulndb's data/osv)")
	out := flag.String("out", "", "directory to write the database to (must not exist)")
	modified := flag.String("modified", "", "the database's time, RFC 3339 (default: the newest entry's)")
	flag.Parse()
	if *osvDir == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run .ci/vulndb.go -osv DIR -out DIR [-modified TIME]")
		os.Exit(2)
	}
	if err := run(*osvDir, *out, *modified); err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
}

func run(osvDir, out, modified string) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists already", out)
	}
	files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no OSV files in %s", osvDir)
	}
	for _, dir := range []string{"index", "ID"} {
		if err := os.MkdirAll(filepath.Join(out, dir), 0o755); err != nil {
			return err
		}
	}
	modules := map[string]*module{}
	var vulns []vuln
	newest := time.Time{}
	seen := map[string]bool{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if e.ID == "" || seen[e.ID] {
			return fmt.Errorf("%s: missing or repeated id %q", file, e.ID)
		}
		seen[e.ID] = true
		t, err := time.Parse(time.RFC3339, e.Modified)
		if err != nil {
			return fmt.Errorf("%s: modified: %w", file, err)
		}
		if t.After(newest) {
			newest = t
		}
		vulns = append(vulns, vuln{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &module{Path: a.Package.Name, Vulns: []moduleVuln{}}
				modules[a.Package.Name] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified, Fixed: latestFixed(a.Ranges)})
		}
		// The entry as indexdb writes it: compact, its keys in the file's order.
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := write(filepath.Join(out, "ID", e.ID+".json"), compact.Bytes()); err != nil {
			return err
		}
	}
	if modified == "" {
		modified = newest.UTC().Format(time.RFC3339)
	} else if _, err := time.Parse(time.RFC3339, modified); err != nil {
		return fmt.Errorf("-modified: %w", err)
	}
	paths := make([]string, 0, len(modules))
	for p := range modules {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	moduleList := make([]*module, 0, len(paths))
	for _, p := range paths {
		m := modules[p]
		sort.SliceStable(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		moduleList = append(moduleList, m)
	}
	sort.SliceStable(vulns, func(i, j int) bool { return vulns[i].ID < vulns[j].ID })
	for name, v := range map[string]any{
		"db.json": struct {
			Modified string `json:"modified"`
		}{modified},
		"modules.json": moduleList,
		"vulns.json":   vulns,
	} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := write(filepath.Join(out, "index", name), b); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "vulndb: %d entries, %d modules, written to %s\n", len(vulns), len(moduleList), out)
	return nil
}

// write writes b to name and, gzipped, to name.gz.
func write(name string, b []byte) error {
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return err
	}
	var z bytes.Buffer
	w, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(name+".gz", z.Bytes(), 0o644)
}

// latestFixed is x/vulndb's osvutils.LatestFixed: the latest fixed version
// of the SEMVER ranges, or "" if the vulnerability is reintroduced after it.
func latestFixed(ranges []struct {
	Type   string `json:"type"`
	Events []struct {
		Introduced string `json:"introduced"`
		Fixed      string `json:"fixed"`
	} `json:"events"`
}) string {
	latest := ""
	for _, r := range ranges {
		if r.Type != "SEMVER" {
			continue
		}
		for _, e := range r.Events {
			if e.Fixed != "" && before(latest, e.Fixed) {
				latest = e.Fixed
			}
		}
		for _, e := range r.Events {
			if e.Introduced != "" && e.Introduced != "0" && before(latest, e.Introduced) {
				latest = ""
				break
			}
		}
	}
	return latest
}

// before reports whether version a (without "v") sorts before b in semantic
// versioning: x/vulndb's version.Before, which is golang.org/x/mod/semver's
// Compare("v"+a, "v"+b) < 0 (an invalid version, "" among them, sorts before
// every valid one and equal to other invalid ones).
func before(a, b string) bool {
	return compare(a, b) < 0
}

func compare(a, b string) int {
	pa, oka := parse(a)
	pb, okb := parse(b)
	switch {
	case !oka && !okb:
		return 0
	case !oka:
		return -1
	case !okb:
		return 1
	}
	for i := 0; i < 3; i++ {
		if c := compareNum(pa.nums[i], pb.nums[i]); c != 0 {
			return c
		}
	}
	return comparePre(pa.pre, pb.pre)
}

type version struct {
	nums [3]string
	pre  string // without the leading "-"; "" for a release
}

// parse splits MAJOR.MINOR.PATCH[-PRE][+BUILD] (build metadata ignored), or
// the shorthands MAJOR and MAJOR.MINOR, which semver reads as MAJOR.0.0 and
// MAJOR.MINOR.0 and allows without PRE or BUILD only.
func parse(v string) (version, bool) {
	var p version
	if parts := strings.Split(v, "."); len(parts) < 3 && !strings.ContainsAny(v, "-+") {
		v += strings.Repeat(".0", 3-len(parts))
	}
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v, p.pre = v[:i], v[i+1:]
		if p.pre == "" {
			return p, false
		}
		for _, id := range strings.Split(p.pre, ".") {
			if id == "" || (isNum(id) && len(id) > 1 && id[0] == '0') {
				return p, false
			}
		}
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return p, false
	}
	for i, n := range parts {
		if !isNum(n) || (len(n) > 1 && n[0] == '0') {
			return p, false
		}
		p.nums[i] = n
	}
	return p, true
}

func isNum(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// compareNum compares decimal numbers without leading zeros.
func compareNum(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// comparePre compares pre-release strings: a release ("") after any
// pre-release; identifiers one by one, numeric ones numerically and before
// alphanumeric ones; a shorter list first when one is a prefix of the other.
func comparePre(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, y := as[i], bs[i]
		if x == y {
			continue
		}
		xn, yn := isNum(x), isNum(y)
		switch {
		case xn && yn:
			return compareNum(x, y)
		case xn:
			return -1
		case yn:
			return 1
		default:
			return strings.Compare(x, y)
		}
	}
	switch {
	case len(as) < len(bs):
		return -1
	case len(as) > len(bs):
		return 1
	}
	return 0
}
