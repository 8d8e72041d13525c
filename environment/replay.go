package environment

import (
	"context"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/bandit-node/bandit-node/protocol"
)

// Order says which row of a replay file answers a query.
type Order string

// The orders.
const (
	// OrderSequential: row t answers step t's queries (without
	// replacement); a step beyond the last row is an error.
	OrderSequential Order = "sequential"
	// OrderSample: each query is answered by a row drawn uniformly, with
	// replacement, from the injected randomness.
	OrderSample Order = "sample"
)

// ReplayConfig configures a replay environment: a CSV file whose rows
// answer queries. See the package documentation for the format.
type ReplayConfig struct {
	// Label names the environment in every error.
	Label string
	// File is the CSV file.
	File string
	// Order is OrderSequential or OrderSample.
	Order Order
}

// Validate says what is wrong with c, if anything; it does not read the
// file (CheckReplay does).
func (c ReplayConfig) Validate() error {
	if c.File == "" {
		return errors.New("file: want the CSV file to replay")
	}
	switch c.Order {
	case OrderSequential, OrderSample:
		return nil
	}
	return fmt.Errorf("order: %q is not an order; want \"sequential\" (row t answers step t, without replacement) or \"sample\" (a row drawn uniformly, with replacement)", c.Order)
}

// Replay is a replay environment: a CSV file, read whole when it is
// made, whose rows answer queries.
type Replay struct {
	cfg  ReplayConfig
	data *replayData

	mu   sync.Mutex // guards rand
	rand io.Reader
	buf  [8]byte
}

// replayData is a replay file's rows.
type replayData struct {
	file       string
	cols, rows int
	values     []float64 // row-major
}

func (d *replayData) row(i int) []float64 { return d.values[i*d.cols : (i+1)*d.cols] }

// NewReplay reads cfg.File and returns its replay environment. rand is
// the randomness of OrderSample (a seeded stream in simulations, so that
// they are reproducible); OrderSequential ignores it.
func NewReplay(cfg ReplayConfig, rand io.Reader) (*Replay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label, err)
	}
	if cfg.Order == OrderSample && rand == nil {
		return nil, fmt.Errorf("%s: order = \"sample\" needs a source of randomness", cfg.Label)
	}
	d, err := readReplay(cfg.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label, err)
	}
	return &Replay{cfg: cfg, data: d, rand: rand}, nil
}

// Rows returns the file's number of rows.
func (r *Replay) Rows() int { return r.data.rows }

// Columns returns the file's number of columns.
func (r *Replay) Columns() int { return r.data.cols }

// Answer answers q from a row of the file: for a pull, the columns of
// the pulled arms (a file of one column answers a pull of any one arm); for a procurement, those of the producers; for a
// context or the rewards of every arm, the whole row.
func (r *Replay) Answer(ctx context.Context, q protocol.Query) (protocol.Outcome, error) {
	fail := func(err error) (protocol.Outcome, error) {
		return protocol.Outcome{}, queryError(r.cfg.Label, &q, "", err)
	}
	if err := checkQuery(q); err != nil {
		return fail(fmt.Errorf("cannot ask: %w", err))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	var i int
	switch r.cfg.Order {
	case OrderSequential:
		if q.Step >= int64(r.data.rows) {
			return fail(fmt.Errorf("replay file %s has %d rows; step %d asked for more", r.data.file, r.data.rows, q.Step))
		}
		i = int(q.Step)
	case OrderSample:
		var err error
		if i, err = r.sample(); err != nil {
			return fail(fmt.Errorf("drawing a row of replay file %s: %w", r.data.file, err))
		}
	}
	row := r.data.row(i)
	o := protocol.Outcome{ID: q.ID}
	pick := func(what string, idx []int) ([]float64, error) {
		out := make([]float64, len(idx))
		for j, c := range idx {
			if c >= len(row) {
				return nil, fmt.Errorf("%s %d, but replay file %s has %d columns (%s 0 to %d)", what, c, r.data.file, len(row), what, len(row)-1)
			}
			out[j] = row[c]
		}
		return out, nil
	}
	var err error
	switch q.Kind {
	case protocol.QueryPull:
		if len(row) == 1 && len(q.Arms) == 1 {
			// One column: the rewards of one arm, the role's own.
			o.Rewards = []float64{row[0]}
			break
		}
		o.Rewards, err = pick("arm", q.Arms)
	case protocol.QueryProcure:
		o.Qualities, err = pick("producer", q.Producers)
	case protocol.QueryRewards:
		o.Rewards = append([]float64(nil), row...)
	case protocol.QueryContext:
		o.X = append([]float64(nil), row...)
	}
	if err != nil {
		return fail(err)
	}
	return o, nil
}

// sample draws a row index uniformly (rejection sampling over 64 bits).
func (r *Replay) sample() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := uint64(r.data.rows)
	limit := math.MaxUint64 - math.MaxUint64%n // a multiple of n
	for {
		if _, err := io.ReadFull(r.rand, r.buf[:]); err != nil {
			return 0, err
		}
		if v := binary.BigEndian.Uint64(r.buf[:]); v < limit {
			return int(v % n), nil
		}
	}
}

// Close does nothing: the file was read whole.
func (r *Replay) Close() error { return nil }

// CheckReplay checks a replay file at admission, before a session starts:
// that it exists and is well formed (see the package documentation), that it has exactly
// columns columns (0: any number) and, for OrderSequential, at least
// steps rows (0: any number). Each error names the file, and the line
// when it is about one.
func CheckReplay(file string, columns int, steps int64, order Order) error {
	if err := (ReplayConfig{File: file, Order: order}).Validate(); err != nil {
		return err
	}
	d, err := readReplay(file)
	if err != nil {
		return err
	}
	if columns > 0 && d.cols != columns {
		return fmt.Errorf("replay file %s has %d columns; want %d", file, d.cols, columns)
	}
	if order == OrderSequential && steps > 0 && int64(d.rows) < steps {
		return fmt.Errorf("replay file %s has %d rows; the session needs %d, one per step (order = \"sequential\" replays without replacement)", file, d.rows, steps)
	}
	return nil
}

// readReplay reads a replay file: CSV, lines starting with # ignored, an
// optional header (a first row without a number in it), then at least
// one row of finite numbers, every row as wide as the first.
func readReplay(file string) (*replayData, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("replay file: %w", err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1 // checked here, with a clearer message
	cr.ReuseRecord = true
	d := &replayData{file: file}
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", file, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("replay file %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			d.cols = len(rec)
			if noNumbers(rec) {
				continue // a header
			}
		}
		if len(rec) != d.cols {
			return nil, fmt.Errorf("%s:%d: %d columns; the first row has %d", file, line, len(rec), d.cols)
		}
		for i, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: column %d: %q is not a finite number", file, line, i+1, s)
			}
			d.values = append(d.values, v)
		}
		d.rows++
	}
	if d.rows == 0 {
		if first {
			return nil, fmt.Errorf("replay file %s is empty", file)
		}
		return nil, fmt.Errorf("replay file %s has a header but no rows", file)
	}
	return d, nil
}

func noNumbers(rec []string) bool {
	for _, s := range rec {
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return false
		}
	}
	return true
}

// Immediate implements protocol.Environment: a file is read as the role
// asks, and can fail for reasons of its own, on the environment's own
// goroutine.
func (r *Replay) Immediate() bool { return false }
