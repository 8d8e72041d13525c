package protocol_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// kindsTable has a field of every kind a family's params or simulation
// table uses.
type kindsTable struct {
	Budget    int64     `toml:"budget"`
	Count     int       `toml:"count"`
	Seed      uint64    `toml:"seed"`
	Small     int8      `toml:"small"`
	Delta     float64   `toml:"delta"`
	Algorithm string    `toml:"algorithm"`
	Verbose   bool      `toml:"verbose"`
	Arms      []float64 `toml:"arms"`
	Caps      []int     `toml:"caps"`
	Inner     struct {
		Rate float64 `toml:"rate"`
	} `toml:"inner"`
}

// TestDecodeTableKindErrors checks that a value of the wrong kind is
// reported by its key path and the kind wanted in plain words, with no line
// number (the decoder's counted lines of a re-encoded table) and no Go type
// names.
func TestDecodeTableKindErrors(t *testing.T) {
	tests := []struct {
		name  string
		table string // the [params] table's lines, after some padding lines
		want  string
	}{
		{"text for a whole number", `budget = "100"`, `params.budget: want a whole number, got text "100"`},
		{"fraction for a whole number", `count = 2.5`, `params.count: want a whole number, got 2.5`},
		{"float that looks whole", `count = 5.0`, `params.count: want a whole number, got 5.0`},
		{"bool for an unsigned", `seed = true`, `params.seed: want a whole number, got true`},
		{"negative for an unsigned", `seed = -1`, `params.seed: want a whole number of 0 or more, got -1`},
		{"text for a number", `delta = "0.1"`, `params.delta: want a number, got text "0.1"`},
		{"list for a number", `delta = [0.1]`, `params.delta: want a number, got a list`},
		{"number for text", `algorithm = 3`, `params.algorithm: want text, got 3`},
		{"text for a bool", `verbose = "yes"`, `params.verbose: want true or false, got text "yes"`},
		{"item of a list of numbers", `arms = [0.5, "0.4"]`, `params.arms[1]: want a number, got text "0.4" (params.arms is a list of numbers)`},
		{"scalar for a list", `arms = 0.5`, `params.arms: want a list of numbers, got 0.5`},
		{"item of a list of whole numbers", `caps = [1, 2.5]`, `params.caps[1]: want a whole number, got 2.5 (params.caps is a list of whole numbers)`},
		{"number for a table", `inner = 3`, `params.inner: want a table, got 3`},
		{"out of range", `small = 300`, `params.small: `},
		{"case-folded key", `Budget = "x"`, `params.Budget: want a whole number, got text "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The mistake sits on line 8 of the file; no error may claim another line.
			text := "protocol = \"ping\"\n#\n#\n#\n#\n#\n[params]\n" + tt.table + "\n"
			s, err := protocol.ParseSpec("spec.toml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			var v kindsTable
			err = protocol.DecodeTable("params", s.Params, &v)
			if err == nil {
				t.Fatalf("decoded %q without error", tt.table)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tt.want) {
				t.Errorf("err = %q, want it to start %q", msg, tt.want)
			}
			for _, bad := range []string{"line ", "toml:", "int64", "float64", "interface", "destination"} {
				if strings.Contains(msg, bad) {
					t.Errorf("err = %q mentions %q", msg, bad)
				}
			}
		})
	}
}

// TestDecodeTableStillStrict checks that the kind check leaves unknown keys
// to the strict decoder (named, even when their value is of any kind) and
// that well-kinded tables, TOML or Go values, decode.
func TestDecodeTableStillStrict(t *testing.T) {
	var v kindsTable
	err := protocol.DecodeTable("params", map[string]any{"budgett": "100"}, &v)
	if err == nil || err.Error() != "unknown key params.budgett" {
		t.Errorf("err = %v, want unknown key params.budgett", err)
	}
	err = protocol.DecodeTable("params", map[string]any{"inner": map[string]any{"rate": "fast"}}, &v)
	if want := `params.inner.rate: want a number, got text "fast"`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	raw := map[string]any{"budget": int64(7), "count": 3, "delta": int64(1), "arms": []float64{0.5, 0.4},
		"caps": []any{int64(1), int64(2)}, "algorithm": "x", "verbose": true, "seed": int64(9),
		"inner": map[string]any{"rate": 0.5}}
	if err := protocol.DecodeTable("params", raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.Budget != 7 || v.Count != 3 || v.Delta != 1 || len(v.Arms) != 2 || v.Caps[1] != 2 || v.Inner.Rate != 0.5 || v.Seed != 9 {
		t.Errorf("decoded %+v", v)
	}
}

// embeddedTable is a table with an embedded struct, pointers, a map and a
// duration, the shapes DecodeTable fills without a TOML decoder.
type embeddedTable struct {
	kindsTable
	Wait   time.Duration      `toml:"wait"`
	Mean   *float64           `toml:"mean"`
	Limits map[string]float64 `toml:"limits"`
	Any    any                `toml:"any"`
}

// TestDecodeTableDirect checks the shapes DecodeTable decodes directly from
// a raw table, and that unknown keys at any depth are all named.
func TestDecodeTableDirect(t *testing.T) {
	var v embeddedTable
	v.Delta = 0.25 // a default the table leaves alone
	raw := map[string]any{"budget": int64(5), "wait": "2s", "mean": 0.5, "limits": map[string]any{"eps": int64(1)},
		"any": []any{"x"}, "small": int64(-128)}
	if err := protocol.DecodeTable("params", raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.Budget != 5 || v.Wait != 2*time.Second || v.Mean == nil || *v.Mean != 0.5 || v.Limits["eps"] != 1 || v.Delta != 0.25 || v.Small != -128 {
		t.Errorf("decoded %+v", v)
	}
	tests := []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"small": int64(300)}, "params.small: 300 is out of range for a whole number from -128 to 127"},
		{map[string]any{"wait": "soon"}, `params.wait: want a duration such as "1s", got text "soon"`},
		{map[string]any{"limits": map[string]any{"eps": "x"}}, `params.limits.eps: want a number, got text "x"`},
		{map[string]any{"zeta": 1, "inner": map[string]any{"rat": 1.0}}, "unknown keys params.inner.rat, params.zeta"},
	}
	for _, tt := range tests {
		var v embeddedTable
		if err := protocol.DecodeTable("params", tt.raw, &v); err == nil || err.Error() != tt.want {
			t.Errorf("DecodeTable(%v) = %v, want %s", tt.raw, err, tt.want)
		}
	}
}
