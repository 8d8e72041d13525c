package environment

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/bandit-node/bandit-node/protocol"
)

// The wire of the exec and http environments: requests are encoded by
// appending to a reused buffer, answers decoded by a small strict decoder
// into reused slices, so that a round trip allocates next to nothing.

// Version is the version of the wire protocol that the hello lines carry.
const Version = 1

// HelloName is the value of the "hello" field of both hello lines.
const HelloName = "bandit-node/environment"

// MaxAnswerBytes bounds an answer: a line of an exec program, or the body
// of an http answer. A longer one is an error, never a larger buffer.
const MaxAnswerBytes = 1 << 20

// checkQuery refuses a query the wire cannot carry: an unknown kind, a
// negative arm or producer, a non-finite or negative quantity.
func checkQuery(q protocol.Query) error {
	switch q.Kind {
	case protocol.QueryPull:
		if len(q.Arms) == 0 {
			return errors.New("the pull names no arm")
		}
		for _, a := range q.Arms {
			if a < 0 {
				return fmt.Errorf("the pull names arm %d", a)
			}
		}
	case protocol.QueryContext, protocol.QueryRewards:
	case protocol.QueryProcure:
		if len(q.Producers) == 0 || len(q.Producers) != len(q.Quantities) {
			return fmt.Errorf("the procurement names %d producers and %d quantities", len(q.Producers), len(q.Quantities))
		}
		for i, p := range q.Producers {
			if p < 0 {
				return fmt.Errorf("the procurement names producer %d", p)
			}
			if v := q.Quantities[i]; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("the procurement asks producer %d for quantity %v", p, v)
			}
		}
	default:
		return fmt.Errorf("unknown query kind %v", q.Kind)
	}
	if q.Step < 0 {
		return fmt.Errorf("negative step %d", q.Step)
	}
	return nil
}

// appendRequest appends q's request object, without a newline, to b. q has
// passed checkQuery.
func appendRequest(b []byte, q protocol.Query) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, q.ID, 10)
	b = append(b, `,"kind":"`...)
	b = append(b, q.Kind.String()...)
	b = append(b, `","step":`...)
	b = strconv.AppendInt(b, q.Step, 10)
	switch q.Kind {
	case protocol.QueryPull:
		if len(q.Arms) == 1 {
			b = append(b, `,"arm":`...)
			b = strconv.AppendInt(b, int64(q.Arms[0]), 10)
		}
		b = append(b, `,"arms":`...)
		b = appendInts(b, q.Arms)
	case protocol.QueryProcure:
		b = append(b, `,"producers":`...)
		b = appendInts(b, q.Producers)
		b = append(b, `,"quantities":[`...)
		for i, v := range q.Quantities {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendInts(b []byte, xs []int) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// appendHello appends the daemon's hello object for s, without a newline:
// which session, family, role and party the program answers for.
func appendHello(b []byte, h Session) []byte {
	b = append(b, `{"hello":"`+HelloName+`","version":`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `,"session":`...)
	b = appendString(b, h.ID)
	b = append(b, `,"protocol":`...)
	b = appendString(b, h.Protocol)
	b = append(b, `,"role":`...)
	b = appendString(b, h.Role)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(h.Index), 10)
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// answer is a decoded answer object. Each field's has flag says whether
// the object held it; the slices are reused from one answer to the next.
type answer struct {
	id                                     uint64
	reward                                 float64
	rewards, x, qualities                  []float64
	errText, hello                         string
	version                                int64
	hasID, hasReward, hasRewards, hasX     bool
	hasQualities, hasError, hasHello, hasV bool
}

func (a *answer) reset() {
	*a = answer{rewards: a.rewards[:0], x: a.x[:0], qualities: a.qualities[:0]}
}

// fields lists the fields a has, in a fixed order, for error messages.
func (a *answer) fields() []string {
	var f []string
	for _, c := range []struct {
		has  bool
		name string
	}{{a.hasID, "id"}, {a.hasReward, "reward"}, {a.hasRewards, "rewards"}, {a.hasX, "x"}, {a.hasQualities, "qualities"}, {a.hasError, "error"}, {a.hasHello, "hello"}, {a.hasV, "version"}} {
		if c.has {
			f = append(f, c.name)
		}
	}
	return f
}

// decodeAnswer decodes one answer object from line into a (reset first).
// It accepts exactly one JSON object, surrounded by optional whitespace,
// whose fields are among id, reward, rewards, x, qualities, error, hello
// and version, each at most once and of its type: id a whole number
// ≥ 0, version a whole number, reward a finite number, rewards, x and
// qualities arrays of finite numbers, error and hello strings. Anything
// else is an error saying what and where.
func decodeAnswer(line []byte, a *answer) error {
	a.reset()
	d := decoder{b: line}
	d.ws()
	if !d.eat('{') {
		return d.errorf("want a JSON object")
	}
	d.ws()
	if d.eat('}') {
		d.ws()
		return d.end()
	}
	for {
		d.ws()
		name, err := d.key()
		if err != nil {
			return err
		}
		d.ws()
		if !d.eat(':') {
			return d.errorf("want ':' after %q", name)
		}
		d.ws()
		if err := d.field(name, a); err != nil {
			return err
		}
		d.ws()
		if d.eat(',') {
			continue
		}
		if d.eat('}') {
			break
		}
		return d.errorf("want ',' or '}'")
	}
	d.ws()
	return d.end()
}

type decoder struct {
	b []byte
	i int
}

func (d *decoder) errorf(format string, args ...any) error {
	if d.i >= len(d.b) {
		return fmt.Errorf("malformed answer: %s at its end", fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("malformed answer: %s at byte %d", fmt.Sprintf(format, args...), d.i+1)
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) end() error {
	if d.i != len(d.b) {
		return d.errorf("unexpected text after the object")
	}
	return nil
}

// key reads a field name. Names are plain ASCII: one with an escape or
// another byte cannot be a known field.
func (d *decoder) key() (string, error) {
	if !d.eat('"') {
		return "", d.errorf("want a field name")
	}
	start := d.i
	for d.i < len(d.b) && d.b[d.i] != '"' {
		if c := d.b[d.i]; c < 'a' || c > 'z' {
			// Not a known field; say which, as far as it can be told.
			end := d.i
			for end < len(d.b) && end-start < 40 && d.b[end] != '"' {
				end++
			}
			return "", d.errorf("unknown field %q", d.b[start:end])
		}
		d.i++
	}
	if d.i >= len(d.b) {
		return "", d.errorf("unterminated field name")
	}
	name := d.b[start:d.i]
	d.i++
	switch string(name) { // no allocation: the compiler converts for the switch only
	case "id":
		return "id", nil
	case "reward":
		return "reward", nil
	case "rewards":
		return "rewards", nil
	case "x":
		return "x", nil
	case "qualities":
		return "qualities", nil
	case "error":
		return "error", nil
	case "hello":
		return "hello", nil
	case "version":
		return "version", nil
	}
	return "", fmt.Errorf("malformed answer: unknown field %q", name)
}

func (d *decoder) field(name string, a *answer) error {
	dup := func(has *bool) error {
		if *has {
			return fmt.Errorf("malformed answer: field %q appears twice", name)
		}
		*has = true
		return nil
	}
	var err error
	switch name {
	case "id":
		if err = dup(&a.hasID); err == nil {
			a.id, err = d.uint(name)
		}
	case "version":
		if err = dup(&a.hasV); err == nil {
			var v uint64
			v, err = d.uint(name)
			a.version = int64(min(v, math.MaxInt64))
		}
	case "reward":
		if err = dup(&a.hasReward); err == nil {
			a.reward, err = d.number(name)
		}
	case "rewards":
		if err = dup(&a.hasRewards); err == nil {
			a.rewards, err = d.numbers(name, a.rewards)
		}
	case "x":
		if err = dup(&a.hasX); err == nil {
			a.x, err = d.numbers(name, a.x)
		}
	case "qualities":
		if err = dup(&a.hasQualities); err == nil {
			a.qualities, err = d.numbers(name, a.qualities)
		}
	case "error":
		if err = dup(&a.hasError); err == nil {
			a.errText, err = d.string(name)
		}
	case "hello":
		if err = dup(&a.hasHello); err == nil {
			a.hello, err = d.string(name)
		}
	}
	return err
}

// numberSpan scans a JSON number and returns its text and whether it is
// a plain integer (no sign, fraction or exponent).
func (d *decoder) numberSpan(name string) ([]byte, bool, error) {
	start := d.i
	integer := true
	if d.eat('-') {
		integer = false
	}
	switch {
	case d.eat('0'):
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		d.i = start
		return nil, false, d.errorf("%s: want a number", name)
	}
	if d.eat('.') {
		integer = false
		if d.digits() == 0 {
			return nil, false, d.errorf("%s: want a digit after '.'", name)
		}
	}
	if d.eat('e') || d.eat('E') {
		integer = false
		if !d.eat('+') {
			d.eat('-')
		}
		if d.digits() == 0 {
			return nil, false, d.errorf("%s: want a digit in the exponent", name)
		}
	}
	return d.b[start:d.i], integer, nil
}

func (d *decoder) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

func (d *decoder) uint(name string) (uint64, error) {
	start := d.i
	s, integer, err := d.numberSpan(name)
	if err != nil {
		return 0, err
	}
	if !integer {
		d.i = start
		return 0, d.errorf("%s: want a whole number ≥ 0, got %s", name, s)
	}
	v, err := strconv.ParseUint(string(s), 10, 64)
	if err != nil {
		d.i = start
		return 0, d.errorf("%s: %s is too large", name, s)
	}
	return v, nil
}

func (d *decoder) number(name string) (float64, error) {
	start := d.i
	s, _, err := d.numberSpan(name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil || math.IsInf(v, 0) {
		d.i = start
		return 0, d.errorf("%s: %s is not a finite number", name, s)
	}
	return v, nil
}

func (d *decoder) numbers(name string, dst []float64) ([]float64, error) {
	dst = dst[:0]
	if !d.eat('[') {
		return dst, d.errorf("%s: want an array of numbers", name)
	}
	d.ws()
	if d.eat(']') {
		return dst, nil
	}
	for {
		d.ws()
		v, err := d.number(name)
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
		d.ws()
		if d.eat(',') {
			continue
		}
		if d.eat(']') {
			return dst, nil
		}
		return dst, d.errorf("%s: want ',' or ']'", name)
	}
}

// string reads a JSON string; encoding/json checks and unescapes it (only
// hello and error answers carry strings).
func (d *decoder) string(name string) (string, error) {
	start := d.i
	if !d.eat('"') {
		return "", d.errorf("%s: want a string", name)
	}
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case '\\':
			d.i += 2
			continue
		case '"':
			d.i++
			var s string
			if err := json.Unmarshal(d.b[start:d.i], &s); err != nil {
				d.i = start
				return "", d.errorf("%s: not a valid JSON string", name)
			}
			return s, nil
		}
		d.i++
	}
	d.i = start
	return "", d.errorf("%s: unterminated string", name)
}

// answeredError wraps the text of an answer {"id":…,"error":"text"}: the
// program or service itself says the query cannot be answered.
type answeredError struct{ text string }

func (e *answeredError) Error() string { return fmt.Sprintf("it answered with an error: %q", e.text) }

// outcome checks a, the answer to q, and turns it into q's outcome. The
// outcome's slices are fresh: the role may keep them.
func outcome(q protocol.Query, a *answer) (protocol.Outcome, error) {
	if !a.hasID {
		return protocol.Outcome{}, errors.New("the answer has no id")
	}
	if a.id != q.ID {
		return protocol.Outcome{}, fmt.Errorf("the answer's id is %d, want %d (answers come one per request, in order)", a.id, q.ID)
	}
	if a.hasError {
		if f := a.fields(); len(f) != 2 {
			return protocol.Outcome{}, fmt.Errorf("an error answer holds only id and error, this one %v", f)
		}
		return protocol.Outcome{}, &answeredError{a.errText}
	}
	if a.hasHello || a.hasV {
		return protocol.Outcome{}, errors.New("a hello or version field in an answer to a request")
	}
	o := protocol.Outcome{ID: q.ID}
	want := func(name string, has bool, others ...bool) error {
		if !has {
			return fmt.Errorf("a %s answer needs %s", q.Kind, name)
		}
		for _, other := range others {
			if other {
				return fmt.Errorf("a %s answer holds only id and %s, this one %v", q.Kind, name, a.fields())
			}
		}
		return nil
	}
	switch q.Kind {
	case protocol.QueryPull:
		if a.hasReward && a.hasRewards {
			return o, errors.New("the answer gives both reward and rewards; give one")
		}
		if a.hasReward {
			if len(q.Arms) != 1 {
				return o, fmt.Errorf("a pull of %d arms needs rewards, one per arm, not reward", len(q.Arms))
			}
			if err := want("reward", true, a.hasX, a.hasQualities); err != nil {
				return o, err
			}
			o.Rewards = []float64{a.reward}
			return o, nil
		}
		if err := want("reward or rewards", a.hasRewards, a.hasX, a.hasQualities); err != nil {
			return o, err
		}
		if len(a.rewards) != len(q.Arms) {
			return o, fmt.Errorf("the answer gives %d rewards for %d pulled arms", len(a.rewards), len(q.Arms))
		}
		o.Rewards = append([]float64(nil), a.rewards...)
	case protocol.QueryRewards:
		if err := want("rewards", a.hasRewards, a.hasReward, a.hasX, a.hasQualities); err != nil {
			return o, err
		}
		if len(a.rewards) == 0 {
			return o, errors.New("the answer gives no rewards")
		}
		o.Rewards = append([]float64(nil), a.rewards...)
	case protocol.QueryContext:
		if err := want("x", a.hasX, a.hasReward, a.hasRewards, a.hasQualities); err != nil {
			return o, err
		}
		if len(a.x) == 0 {
			return o, errors.New("the answer gives an empty x")
		}
		o.X = append([]float64(nil), a.x...)
	case protocol.QueryProcure:
		if err := want("qualities", a.hasQualities, a.hasReward, a.hasRewards, a.hasX); err != nil {
			return o, err
		}
		if len(a.qualities) != len(q.Producers) {
			return o, fmt.Errorf("the answer gives %d qualities for %d producers", len(a.qualities), len(q.Producers))
		}
		o.Qualities = append([]float64(nil), a.qualities...)
	}
	return o, nil
}

// checkHello checks a, a program's answer to the daemon's hello.
func checkHello(a *answer) error {
	if a.hasError {
		return &answeredError{a.errText}
	}
	if !a.hasHello || a.hello != HelloName {
		return fmt.Errorf("want the hello line {\"hello\":%q,\"version\":%d}", HelloName, Version)
	}
	if !a.hasV {
		return fmt.Errorf("its hello has no version; want {\"hello\":%q,\"version\":%d}", HelloName, Version)
	}
	if a.version != Version {
		return fmt.Errorf("it speaks version %d of the protocol; this daemon speaks version %d", a.version, Version)
	}
	if f := a.fields(); len(f) != 2 {
		return fmt.Errorf("its hello holds only hello and version, this one %v", f)
	}
	return nil
}
