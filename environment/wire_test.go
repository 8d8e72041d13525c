package environment

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

func TestAppendRequest(t *testing.T) {
	tests := []struct {
		q    protocol.Query
		want string
	}{
		{pull(7, 12, 4), `{"id":7,"kind":"pull","step":12,"arm":4,"arms":[4]}`},
		{pull(8, 3, 0, 2, 5), `{"id":8,"kind":"pull","step":3,"arms":[0,2,5]}`},
		{protocol.Query{ID: 9, Kind: protocol.QueryContext, Step: 5}, `{"id":9,"kind":"context","step":5}`},
		{protocol.Query{ID: 10, Kind: protocol.QueryRewards, Step: 5}, `{"id":10,"kind":"rewards","step":5}`},
		{protocol.Query{ID: 11, Kind: protocol.QueryProcure, Step: 2, Producers: []int{0, 3}, Quantities: []float64{10, 5.5}}, `{"id":11,"kind":"procure","step":2,"producers":[0,3],"quantities":[10,5.5]}`},
		{protocol.Query{ID: 12, Kind: protocol.QueryProcure, Step: 0, Producers: []int{1}, Quantities: []float64{1e21}}, `{"id":12,"kind":"procure","step":0,"producers":[1],"quantities":[1e+21]}`},
	}
	for _, tt := range tests {
		if err := checkQuery(tt.q); err != nil {
			t.Fatal(err)
		}
		got := string(appendRequest(nil, tt.q))
		if got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s is not valid JSON", got)
		}
	}
	h := string(appendHello(nil, Session{ID: "s\"1", Protocol: "samba", Role: "data_owner", Index: 3, Org: "acme"}))
	if want := `{"hello":"bandit-node/environment","version":1,"session":"s\"1","protocol":"samba","role":"data_owner","index":3}`; h != want {
		t.Errorf("hello: got %s, want %s", h, want)
	}
}

func TestCheckQuery(t *testing.T) {
	for _, q := range []protocol.Query{
		{Kind: protocol.QueryPull},
		{Kind: protocol.QueryPull, Arms: []int{-1}},
		{Kind: protocol.QueryProcure, Producers: []int{1}},
		{Kind: protocol.QueryProcure, Producers: []int{1}, Quantities: []float64{math.NaN()}},
		{Kind: protocol.QueryProcure, Producers: []int{-1}, Quantities: []float64{1}},
		{Kind: protocol.QueryContext, Step: -1},
		{Kind: 0},
		{Kind: 99},
	} {
		if err := checkQuery(q); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

func TestOutcome(t *testing.T) {
	procure := protocol.Query{ID: 1, Kind: protocol.QueryProcure, Producers: []int{0, 3}, Quantities: []float64{1, 1}}
	ctxq := protocol.Query{ID: 1, Kind: protocol.QueryContext}
	rewards := protocol.Query{ID: 1, Kind: protocol.QueryRewards}
	tests := []struct {
		q      protocol.Query
		answer string
		want   protocol.Outcome
		err    string
	}{
		{pull(1, 0, 4), `{"id":1,"reward":0.73}`, protocol.Outcome{ID: 1, Rewards: []float64{0.73}}, ""},
		{pull(1, 0, 4), ` { "rewards" : [ 0.73 ] , "id" : 1 } ` + "\r\n", protocol.Outcome{ID: 1, Rewards: []float64{0.73}}, ""},
		{pull(1, 0, 0, 1), `{"id":1,"rewards":[1,-2.5e-3]}`, protocol.Outcome{ID: 1, Rewards: []float64{1, -0.0025}}, ""},
		{procure, `{"id":1,"qualities":[0.5,0.25]}`, protocol.Outcome{ID: 1, Qualities: []float64{0.5, 0.25}}, ""},
		{ctxq, `{"id":1,"x":[1,2,3]}`, protocol.Outcome{ID: 1, X: []float64{1, 2, 3}}, ""},
		{rewards, `{"id":1,"rewards":[0,1]}`, protocol.Outcome{ID: 1, Rewards: []float64{0, 1}}, ""},
		{pull(1, 0, 4), `{"reward":0.73}`, protocol.Outcome{}, "the answer has no id"},
		{pull(1, 0, 4), `{"id":2,"reward":0.73}`, protocol.Outcome{}, "the answer's id is 2, want 1"},
		{pull(1, 0, 4), `{"id":1,"reward":0.7,"rewards":[0.7]}`, protocol.Outcome{}, "both reward and rewards"},
		{pull(1, 0, 4, 5), `{"id":1,"reward":0.7}`, protocol.Outcome{}, "a pull of 2 arms needs rewards"},
		{pull(1, 0, 4, 5), `{"id":1,"rewards":[0.7]}`, protocol.Outcome{}, "1 rewards for 2 pulled arms"},
		{pull(1, 0, 4), `{"id":1}`, protocol.Outcome{}, "a pull answer needs reward or rewards"},
		{pull(1, 0, 4), `{"id":1,"reward":1,"x":[1]}`, protocol.Outcome{}, "a pull answer holds only id and reward"},
		{pull(1, 0, 4), `{"id":1,"error":"no"}`, protocol.Outcome{}, `it answered with an error: "no"`},
		{pull(1, 0, 4), `{"id":1,"error":"no","reward":1}`, protocol.Outcome{}, "an error answer holds only id and error"},
		{pull(1, 0, 4), `{"id":1,"reward":1,"version":1}`, protocol.Outcome{}, "a hello or version field"},
		{procure, `{"id":1,"qualities":[0.5]}`, protocol.Outcome{}, "1 qualities for 2 producers"},
		{ctxq, `{"id":1,"x":[]}`, protocol.Outcome{}, "an empty x"},
		{ctxq, `{"id":1,"rewards":[1]}`, protocol.Outcome{}, "a context answer needs x"},
		{rewards, `{"id":1,"rewards":[]}`, protocol.Outcome{}, "no rewards"},
		{rewards, `{"id":1,"reward":1}`, protocol.Outcome{}, "a rewards answer needs rewards"},
	}
	var a answer
	for _, tt := range tests {
		var got protocol.Outcome
		err := decodeAnswer([]byte(tt.answer), &a)
		if err == nil {
			got, err = outcome(tt.q, &a)
		}
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %v, want %q", tt.answer, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.answer, got, err, tt.want)
		}
	}
}

func TestDecodeAnswerErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "want a JSON object at its end"},
		{`[]`, "want a JSON object at byte 1"},
		{`{"id":1}x`, "unexpected text after the object at byte 9"},
		{`{"id":1}{"id":2}`, "unexpected text after the object"},
		{`{"id":1,}`, "want a field name"},
		{`{"Id":1}`, `unknown field "Id" at byte 3`},
		{`{"rewrd":1}`, `unknown field "rewrd"`},
		{`{"id":1,"id":1}`, `field "id" appears twice`},
		{`{"id":-1}`, "id: want a whole number ≥ 0, got -1"},
		{`{"id":1.5}`, "id: want a whole number ≥ 0, got 1.5"},
		{`{"id":99999999999999999999}`, "id: 99999999999999999999 is too large"},
		{`{"id":"7"}`, "id: want a number"},
		{`{"reward":NaN}`, "reward: want a number"},
		{`{"reward":1e999}`, "reward: 1e999 is not a finite number"},
		{`{"reward":-1e999}`, "reward: -1e999 is not a finite number"},
		{`{"reward":01}`, "want ',' or '}'"},
		{`{"reward":1.}`, "reward: want a digit after '.'"},
		{`{"reward":1e}`, "reward: want a digit in the exponent"},
		{`{"reward":null}`, "reward: want a number"},
		{`{"rewards":[1,2}`, "rewards: want ',' or ']'"},
		{`{"rewards":[1,]}`, "rewards: want a number"},
		{`{"rewards":1}`, "rewards: want an array of numbers"},
		{`{"error":"unterminated}`, "error: unterminated string"},
		{`{"error":"bad \q escape"}`, "error: not a valid JSON string"},
		{"{\"error\":\"a\x01b\"}", "error: not a valid JSON string"},
		{`{"error":7}`, "error: want a string"},
		{`{"id" 1}`, "want ':' after \"id\""},
	}
	var a answer
	for _, tt := range tests {
		err := decodeAnswer([]byte(tt.in), &a)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestCheckHello(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"hello":"bandit-node/environment","version":1}`, ""},
		{`{"version":1,"hello":"bandit-node/environment"}`, ""},
		{`{"hello":"bandit-node/environment","version":2}`, "speaks version 2"},
		{`{"hello":"bandit-node/environment"}`, "its hello has no version"},
		{`{"hello":"other","version":1}`, "want the hello line"},
		{`{"id":1,"reward":1}`, "want the hello line"},
		{`{"hello":"bandit-node/environment","version":1,"id":3}`, "its hello holds only hello and version"},
		{`{"error":"no database"}`, `it answered with an error: "no database"`},
	}
	var a answer
	for _, tt := range tests {
		err := decodeAnswer([]byte(tt.in), &a)
		if err == nil {
			err = checkHello(&a)
		}
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: got %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestDecodeAnswerAllocs(t *testing.T) {
	var a answer
	line := []byte(`{"id":123,"rewards":[0.25,1,-3e-2]}` + "\n")
	if err := decodeAnswer(line, &a); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { decodeAnswer(line, &a) }); n != 0 {
		t.Errorf("decodeAnswer allocates %v times", n)
	}
}

// FuzzDecodeAnswer checks the answer decoder against encoding/json: it
// never panics, and whatever it accepts is one valid JSON object whose
// fields and values are exactly those it decoded.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"id":7,"reward":0.73}`,
		`{"id":8,"rewards":[0.1,0.9,0.4]}`,
		`{"id":9,"x":[1e-3,-2,3.5E+2]}`,
		`{"id":11,"qualities":[0.8,0.6]}`,
		`{"id":7,"error":"text \"quoted\" \u00e9"}`,
		`{"hello":"bandit-node/environment","version":1}`,
		` {"id" : 0 , "rewards" : [ ] } ` + "\n",
		`{"id":1,"id":2}`,
		`{"reward":1e999}`,
		`{"error":"\ud800"}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var a answer
		if err := decodeAnswer(line, &a); err != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", line, err)
		}
		if got, want := len(m), len(a.fields()); got != want {
			t.Fatalf("%q: encoding/json finds %d fields, the decoder %v", line, got, a.fields())
		}
		num := func(v any) float64 {
			n, ok := v.(json.Number)
			if !ok {
				t.Fatalf("%q: %v is not a number", line, v)
			}
			x, err := n.Float64()
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return x
		}
		nums := func(v any, got []float64) {
			arr, ok := v.([]any)
			if !ok || len(arr) != len(got) {
				t.Fatalf("%q: %v against %v", line, v, got)
			}
			for i := range arr {
				if x := num(arr[i]); x != got[i] {
					t.Fatalf("%q: element %d is %v, decoded %v", line, i, x, got[i])
				}
			}
		}
		for k, v := range m {
			switch k {
			case "id":
				if v.(json.Number).String() != strconv.FormatUint(a.id, 10) {
					t.Fatalf("%q: id %v, decoded %d", line, v, a.id)
				}
			case "version":
				if v.(json.Number).String() != strconv.FormatInt(a.version, 10) && a.version != math.MaxInt64 {
					t.Fatalf("%q: version %v, decoded %d", line, v, a.version)
				}
			case "reward":
				if num(v) != a.reward {
					t.Fatalf("%q: reward %v, decoded %v", line, v, a.reward)
				}
			case "rewards":
				nums(v, a.rewards)
			case "x":
				nums(v, a.x)
			case "qualities":
				nums(v, a.qualities)
			case "error":
				if v != a.errText {
					t.Fatalf("%q: error %q, decoded %q", line, v, a.errText)
				}
			case "hello":
				if v != a.hello {
					t.Fatalf("%q: hello %q, decoded %q", line, v, a.hello)
				}
			default:
				t.Fatalf("%q: accepted unknown field %q", line, k)
			}
		}
	})
}

// BenchmarkDecodeAnswer measures the daemon's side of an answer: decoding
// a single reward and checking it against its query.
func BenchmarkDecodeAnswer(b *testing.B) {
	line := []byte(`{"id":123,"reward":0.73}` + "\n")
	q := pull(123, 12, 4)
	var a answer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := decodeAnswer(line, &a); err != nil {
			b.Fatal(err)
		}
		if _, err := outcome(q, &a); err != nil {
			b.Fatal(err)
		}
	}
}
