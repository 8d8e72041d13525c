package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/bandit-node/bandit-node/environment"
)

// DefaultValues returns the default of every key of config.toml that has
// one, by its dotted name ("session.peer_timeout"), written as a TOML value
// ("\"30s\""). The values are taken from DefaultConfig, from the
// [[sessions]] retry defaults, and from the exec and http environments'
// defaults (under "local.exec." and "local.http."), so that they are
// written once, in Go: the config `bandit-node init` writes and the
// annotated config.example.toml take their defaults from here.
//
// [node] name and listen have no default (requireNode) and are not
// listed. Nor are the [relay] limits, whose defaults are the p2p host's
// (RelayConfig's nil fields), which the config schema does not import:
// RelayDefaultValues lists them.
func DefaultValues() map[string]string {
	m := map[string]string{}
	cfg := reflect.ValueOf(DefaultConfig()).Elem()
	for i := range cfg.NumField() {
		f := cfg.Type().Field(i)
		table := tomlName(f)
		if table == "" || f.Type.Kind() != reflect.Struct {
			continue // [[peers]], [[sessions]], [policy.*], [local.*]
		}
		tv := cfg.Field(i)
		for j := range tv.NumField() {
			key := table + "." + tomlName(f.Type.Field(j))
			if strings.HasSuffix(key, ".") || key == "node.name" || key == "node.listen" {
				continue
			}
			v := tv.Field(j)
			if v.Kind() == reflect.Pointer && v.IsNil() {
				continue // a default of the runtime's ([relay] limits)
			}
			m[key] = tomlValue(v.Interface())
		}
	}
	m["sessions.retry.attempts"] = tomlValue(DefaultRetryAttempts)
	m["sessions.retry.backoff"] = tomlValue(Duration{DefaultRetryBackoff})
	exec := environment.DefaultExecConfig()
	for key, d := range map[string]time.Duration{
		"start_timeout": exec.StartTimeout, "request_timeout": exec.RequestTimeout,
		"restart_window": exec.RestartWindow, "backoff_min": exec.BackoffMin,
		"backoff_max": exec.BackoffMax, "stop_grace": exec.StopGrace,
	} {
		m["local.exec."+key] = tomlValue(Duration{d})
	}
	m["local.exec.max_restarts"] = tomlValue(exec.MaxRestarts)
	m["local.http.request_timeout"] = tomlValue(Duration{environment.DefaultHTTPConfig().RequestTimeout})
	return m
}

// DefaultFuncs are the template functions through which a config template
// (init's config, config.example.toml) writes defaults, from values (as
// DefaultValues returns them; a test passes others to see that every
// default comes from them):
//
//	{{default "session.peer_timeout"}}  the value: "30s"
//	{{set "session.peer_timeout"}}      the setting: peer_timeout = "30s"
//
// A key without a default is an error naming it.
func DefaultFuncs(values map[string]string) template.FuncMap {
	value := func(key string) (string, error) {
		if v, ok := values[key]; ok {
			return v, nil
		}
		return "", fmt.Errorf("config key %q has no default (config.DefaultValues)", key)
	}
	return template.FuncMap{
		"default": value,
		"set": func(key string) (string, error) {
			v, err := value(key)
			if err != nil {
				return "", err
			}
			return key[strings.LastIndex(key, ".")+1:] + " = " + v, nil
		},
	}
}

// tomlName is a struct field's TOML key, or "" for a field not in the file.
func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// tomlValue writes a default as a TOML value, durations the way an operator
// writes them ("10m", not "10m0s"; shortDuration in schedule.go).
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case Duration:
		return strconv.Quote(shortDuration(v.Duration))
	case RetentionAge:
		if v.Duration == 0 {
			return `"0"` // forever; see RetentionAge
		}
		b, _ := v.MarshalText()
		return strconv.Quote(string(b))
	}
	// A new kind of config value needs a case above; the tests that render
	// init's config and the example fail on this text.
	return fmt.Sprintf("unsupported default %T", v)
}
