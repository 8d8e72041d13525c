package schemagen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaDir = "../../../docs/schema"

// generated returns the two schemas as Config and Session write them.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	reg, err := families.Registry()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	sess, err := Session(reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"config.schema.json": cfg, "session.schema.json": sess}
}

// TestCommittedSchemasAreGenerated fails when docs/schema holds other
// schemas than the Go types give: run `go generate .` at the root.
func TestCommittedSchemasAreGenerated(t *testing.T) {
	for name, want := range generated(t) {
		got, err := os.ReadFile(filepath.Join(schemaDir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/schema/%s is not what the Go types give (%v): run go generate . at the repository's root", name, err)
		}
	}
}

// TestExamplesValidate: config.example.toml and the example specs pass
// their schemas, and a file with a key the daemon refuses does not.
func TestExamplesValidate(t *testing.T) {
	c := jsonschema.NewCompiler()
	schemas := map[string]*jsonschema.Schema{}
	for name, text := range generated(t) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(name, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[name], err = c.Compile(name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	specs, err := filepath.Glob("../../../examples/*.toml")
	standing, _ := filepath.Glob("../../../examples/standing/*.toml")
	specs = append(specs, standing...)
	if err != nil || len(specs) == 0 {
		t.Fatalf("no example specs: %v", err)
	}
	type file struct {
		name, schema, text string
		valid              bool
	}
	example, err := os.ReadFile("../../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	files := []file{
		{"config.example.toml", "config.schema.json", string(example), true},
		{"unknown key", "config.schema.json", "[node]\nname = \"a\"\ncolour = \"red\"\n", false},
		{"wrong type", "config.schema.json", "[node]\nname = 5\n", false},
		{"unknown protocol", "session.schema.json", "protocol = \"chess\"\n", false},
		{"unknown spec table", "session.schema.json", "protocol = \"ping\"\n[parameters]\ncount = 1\n", false},
	}
	for _, s := range specs {
		text, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file{filepath.Base(s), "session.schema.json", string(text), true})
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			var v map[string]any
			if _, err := toml.Decode(f.text, &v); err != nil {
				t.Fatal(err)
			}
			js, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
			if err != nil {
				t.Fatal(err)
			}
			err = schemas[f.schema].Validate(doc)
			if (err == nil) != f.valid {
				t.Errorf("validation against %s: %v, want valid %v", f.schema, err, f.valid)
			}
		})
	}
}
