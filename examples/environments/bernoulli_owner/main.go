// Command bernoulli_owner is a minimal SAMBA data owner speaking
// bandit-node's exec protocol, version 1 (docs/environments.md): it answers
// each pull with a Bernoulli draw of its arm's mean. testnet/environments.sh
// --bench builds it to measure what the exec channel costs a SAMBA step
// against the daemon's own simulated arms.
//
//	bernoulli_owner -means 0.53,0.43,0.36 [-seed S]
//
// The data owner's index within its role (the hello's "index") picks its
// mean in -means. Without -seed each start draws a fresh seed.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

func main() {
	means := flag.String("means", "", "the arms' means, comma-separated; the data owner's index picks its own")
	seed := flag.Uint64("seed", 0, "seed the draws (with the index); 0 draws a fresh seed")
	flag.Parse()
	if err := serve(os.Stdin, os.Stdout, *means, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "bernoulli_owner:", err)
		os.Exit(1)
	}
}

// hello is the daemon's hello line, as far as this program reads it.
type hello struct {
	Hello   string `json:"hello"`
	Version int    `json:"version"`
	Index   int    `json:"index"`
}

// request is a request line, as far as this program reads it.
type request struct {
	ID   uint64 `json:"id"`
	Kind string `json:"kind"`
	Arms []int  `json:"arms"`
}

// serve answers the hello on in, then each pull, on out, until in ends.
func serve(in io.Reader, out io.Writer, means string, seed uint64) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	line, err := r.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	var h hello
	if err := json.Unmarshal(line, &h); err != nil || h.Hello != "bandit-node/environment" || h.Version != 1 {
		return fmt.Errorf("not the hello of version 1: %q", line)
	}
	mu, err := mean(means, h.Index)
	if err != nil {
		fmt.Fprintf(w, "{\"error\":%q}\n", err.Error())
		w.Flush()
		return err
	}
	var src *rand.PCG
	if seed != 0 {
		src = rand.NewPCG(seed, uint64(h.Index))
	} else {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	draw := rand.New(src)
	w.WriteString("{\"hello\":\"bandit-node/environment\",\"version\":1}\n")
	if err := w.Flush(); err != nil {
		return err
	}
	var buf []byte
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		var q request
		if err := json.Unmarshal(line, &q); err != nil {
			return fmt.Errorf("a request that is not JSON: %q", line)
		}
		buf = append(buf[:0], `{"id":`...)
		buf = strconv.AppendUint(buf, q.ID, 10)
		if q.Kind != "pull" || len(q.Arms) != 1 {
			buf = append(buf, `,"error":"a data owner answers pulls of its one arm"}`...)
		} else if draw.Float64() < mu {
			buf = append(buf, `,"reward":1}`...)
		} else {
			buf = append(buf, `,"reward":0}`...)
		}
		buf = append(buf, '\n')
		w.Write(buf)
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// mean returns the index-th of the comma-separated means.
func mean(means string, index int) (float64, error) {
	fields := strings.Split(means, ",")
	if means == "" || index < 0 || index >= len(fields) {
		return 0, fmt.Errorf("data owner %d has no mean in -means %q", index, means)
	}
	mu, err := strconv.ParseFloat(strings.TrimSpace(fields[index]), 64)
	if err != nil || !(mu >= 0 && mu <= 1) {
		return 0, fmt.Errorf("-means: %q is not a mean in [0, 1]", fields[index])
	}
	return mu, nil
}
