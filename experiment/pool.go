package experiment

import (
	"context"
	"sync"
)

// Parallel runs do(0) … do(n−1) on workers goroutines and returns the first
// error. It stops handing out work when ctx ends; report (which may be nil)
// is called after each successful job, under a lock, with the number done.
func Parallel(ctx context.Context, n, workers int, do func(i int) error, report func(i, done int)) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	done := 0
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := do(i)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					done++
					if report != nil {
						report(i, done)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
