// Package configexample writes config.example.toml, the annotated example
// config at the repository's root, from its template
// (config.example.toml.tmpl here: the doc text) and the daemon's defaults
// (Defaults), so that each default value is written once, in
// config.DefaultConfig and the typed defaults it uses. `go generate` at the
// root runs ./generate; the tests fail when the committed example is not
// what Render writes.
package configexample

import (
	_ "embed"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"text/template"

	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/config"
)

//go:embed config.example.toml.tmpl
var exampleTemplate string

// Defaults are the defaults the example writes: config.DefaultValues and
// the [relay] limits of the p2p host (node.RelayDefaultValues).
func Defaults() map[string]string {
	m := config.DefaultValues()
	maps.Copy(m, node.RelayDefaultValues())
	return m
}

// Render writes the example config, taking every default from defaults
// (Defaults(); a test passes other values to see that each
// default comes from them).
func Render(defaults map[string]string) ([]byte, error) {
	t, err := template.New("config.example.toml").
		Funcs(config.DefaultFuncs(defaults)).
		Funcs(template.FuncMap{"iec": iec}).
		Option("missingkey=error").
		Parse(exampleTemplate)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// iec writes a number of bytes (a TOML integer) in the largest binary unit
// that divides it: "1 GiB", "64 MiB", "1000 bytes".
func iec(text string) (string, error) {
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return "", fmt.Errorf("iec: %q is not a number of bytes", text)
	}
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name), nil
		}
	}
	return fmt.Sprintf("%d bytes", n), nil
}
