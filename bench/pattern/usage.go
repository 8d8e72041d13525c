package pattern

// usage is a process's resource usage so far.
type usage struct {
	cpu, user float64 // CPU seconds: user and system, user alone
	switches  int64   // context switches, voluntary and not
}
