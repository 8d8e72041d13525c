package config

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDefaultValuesAreTheDefaults: a config that writes out every key of
// DefaultValues loads to the same config as one that leaves them all out,
// so the values init and config.example.toml write (from DefaultValues)
// are the daemon's defaults, in a form it reads back.
func TestDefaultValuesAreTheDefaults(t *testing.T) {
	const minimal = "[node]\nname = \"acme\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	values := DefaultValues()
	tables := map[string][]string{}
	for _, key := range slices.Sorted(maps.Keys(values)) {
		table, name, _ := strings.Cut(key, ".")
		if table == "local" || table == "sessions" {
			continue // not keys of a table of the file (environments, [[sessions]] retry)
		}
		tables[table] = append(tables[table], name+" = "+values[key])
	}
	var full strings.Builder
	full.WriteString(minimal + strings.Join(tables["node"], "\n") + "\n")
	delete(tables, "node")
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		full.WriteString("[" + table + "]\n" + strings.Join(tables[table], "\n") + "\n")
	}
	reg := testRegistry(t)
	dir := t.TempDir()
	got, err := ParseConfig(dir+"/full.toml", []byte(full.String()), reg)
	if err != nil {
		t.Fatalf("%v\n%s", err, full.String())
	}
	want, err := ParseConfig(dir+"/minimal.toml", []byte(minimal), reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table     string
		got, want any
	}{
		{"node", got.Node, want.Node}, {"api", got.API, want.API}, {"log", got.Log, want.Log},
		{"discovery", got.Discovery, want.Discovery}, {"session", got.Session, want.Session},
		{"runtime", got.Runtime, want.Runtime}, {"metrics", got.Metrics, want.Metrics}, {"relay", got.Relay, want.Relay},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("[%s] written out from DefaultValues loads as %+v; left out, as %+v", c.table, c.got, c.want)
		}
	}
}

func TestDefaultFuncs(t *testing.T) {
	f := DefaultFuncs(map[string]string{"session.peer_timeout": `"30s"`})
	set := f["set"].(func(string) (string, error))
	if got, err := set("session.peer_timeout"); err != nil || got != `peer_timeout = "30s"` {
		t.Errorf(`set("session.peer_timeout") = %q, %v`, got, err)
	}
	if _, err := set("session.peer_timeot"); err == nil || !strings.Contains(err.Error(), "session.peer_timeot") {
		t.Errorf("a key without a default: %v", err)
	}
}
