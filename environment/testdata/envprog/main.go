// Command envprog is the test program of package environment's exec
// tests: it speaks the exec protocol, or misbehaves as its flags say.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

type request struct {
	ID         uint64    `json:"id"`
	Kind       string    `json:"kind"`
	Step       int64     `json:"step"`
	Arm        *int      `json:"arm"`
	Arms       []int     `json:"arms"`
	Producers  []int     `json:"producers"`
	Quantities []float64 `json:"quantities"`
}

func main() {
	mode := flag.String("mode", "ok", "ok, garbage, late, exit, stderr-exit, bad-hello, wrong-version, no-hello, mismatch, huge, nonfinite, error, exit-at-start, unknown-field, ignore-term, child")
	after := flag.Int("after", 0, "misbehave after this many good answers")
	delay := flag.Duration("delay", 0, "answer late by this much")
	stateFile := flag.String("state", "", "a file counting starts: misbehave only in the first start")
	flag.Parse()

	starts := 0
	if *stateFile != "" {
		b, _ := os.ReadFile(*stateFile)
		starts, _ = strconv.Atoi(string(b))
		os.WriteFile(*stateFile, []byte(strconv.Itoa(starts+1)), 0o644)
	}
	misbehave := *stateFile == "" || starts == 0

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	say := func(s string) {
		out.WriteString(s)
		out.WriteByte('\n')
		out.Flush()
	}
	fmt.Fprintf(os.Stderr, "envprog starting, mode %s\n", *mode)
	if *mode == "exit-at-start" {
		fmt.Fprintln(os.Stderr, "fatal: cannot open the ratings database")
		os.Exit(3)
	}
	if *mode == "ignore-term" {
		signalIgnoreTerm()
	}
	if *mode == "child" {
		startChild()
	}
	if !in.Scan() {
		return
	}
	var hello map[string]any
	if err := json.Unmarshal(in.Bytes(), &hello); err != nil || hello["hello"] != "bandit-node/environment" {
		fmt.Fprintf(os.Stderr, "bad hello %q\n", in.Bytes())
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "hello for session %v role %v[%v]\n", hello["session"], hello["role"], hello["index"])
	switch *mode {
	case "bad-hello":
		say(`{"hello":"something else","version":1}`)
	case "wrong-version":
		say(`{"hello":"bandit-node/environment","version":2}`)
	case "no-hello":
		time.Sleep(time.Hour)
	default:
		say(`{"hello":"bandit-node/environment","version":1}`)
	}
	n := 0
	for in.Scan() {
		var q request
		if err := json.Unmarshal(in.Bytes(), &q); err != nil {
			fmt.Fprintf(os.Stderr, "bad request %q: %v\n", in.Bytes(), err)
			os.Exit(2)
		}
		if misbehave && n >= *after {
			switch *mode {
			case "garbage":
				say("this is not json")
				continue
			case "late":
				time.Sleep(*delay)
			case "exit":
				fmt.Fprintf(os.Stderr, "exiting after %d answers\n", n)
				os.Exit(1)
			case "stderr-exit":
				fmt.Fprintf(os.Stderr, "panic: KeyError: 'movie_%d'\n", q.Step)
				os.Exit(2)
			case "mismatch":
				say(fmt.Sprintf(`{"id":%d,"reward":0.5}`, q.ID+100))
				continue
			case "huge":
				b := make([]byte, 2<<20)
				for i := range b {
					b[i] = ' '
				}
				out.Write(b)
				say(fmt.Sprintf(`{"id":%d,"reward":0.5}`, q.ID))
				continue
			case "nonfinite":
				say(fmt.Sprintf(`{"id":%d,"reward":1e999}`, q.ID))
				continue
			case "error":
				say(fmt.Sprintf(`{"id":%d,"error":"ratings table is locked"}`, q.ID))
				continue
			case "unknown-field":
				say(fmt.Sprintf(`{"id":%d,"rewrd":0.5}`, q.ID))
				continue
			}
		}
		n++
		switch q.Kind {
		case "pull":
			if q.Arm != nil && len(q.Arms) == 1 && q.Step%2 == 0 {
				say(fmt.Sprintf(`{"id":%d,"reward":%s}`, q.ID, reward(q.Step, *q.Arm)))
				continue
			}
			s := fmt.Sprintf(`{"id":%d,"rewards":[`, q.ID)
			for i, a := range q.Arms {
				if i > 0 {
					s += ","
				}
				s += reward(q.Step, a)
			}
			say(s + "]}")
		case "rewards":
			say(fmt.Sprintf(`{"id":%d,"rewards":[%s,%s,%s]}`, q.ID, reward(q.Step, 0), reward(q.Step, 1), reward(q.Step, 2)))
		case "context":
			say(fmt.Sprintf(`{"id":%d,"x":[%d,0.5,-1]}`, q.ID, q.Step))
		case "procure":
			s := fmt.Sprintf(`{"id":%d,"qualities":[`, q.ID)
			for i, p := range q.Producers {
				if i > 0 {
					s += ","
				}
				s += strconv.FormatFloat(float64(p)/10+q.Quantities[i]/1000, 'g', -1, 64)
			}
			say(s + "]}")
		default:
			say(fmt.Sprintf(`{"id":%d,"error":"unknown kind %s"}`, q.ID, q.Kind))
		}
	}
	if *mode == "ignore-term" {
		time.Sleep(time.Hour) // only SIGKILL ends it
	}
}

// reward is the program's deterministic reward of arm at step.
func reward(step int64, arm int) string {
	return strconv.FormatFloat(float64(arm)+float64(step)/1000, 'g', -1, 64)
}
