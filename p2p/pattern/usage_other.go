//go:build !unix

package pattern

// processUsage returns zero: this system's resource usage is not read, so
// a run reports its time but no CPU seconds or context switches.
func processUsage() usage { return usage{} }
