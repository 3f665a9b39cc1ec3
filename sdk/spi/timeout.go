package spi

import "time"

// The params of a run timeout (ratchet.WithTimeout): TimeoutParam holds a
// Go duration ("0s": none, overriding the task's and the node's), and
// TimeoutFinalParam, when "1", makes a run past it fail for good instead
// of being retried.
const (
	TimeoutParam      = "ratchet.timeout"
	TimeoutFinalParam = "ratchet.timeout_final"
)

// RunTimeout is the run timeout job j names in its params: the timeout (0
// for none) and whether the job names one at all (ok; a value that does
// not parse names none), and whether a run past a timeout, its own or the
// node's, fails for good.
func RunTimeout(j *Job) (d time.Duration, final, ok bool) {
	final = j.Params[TimeoutFinalParam] == "1"
	v, found := j.Params[TimeoutParam]
	if !found {
		return 0, final, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, final, false
	}
	return d, final, true
}

// StartByParam holds a job's start-by deadline (ratchet.WithStartBy), a
// UTC time in RFC 3339 with nanoseconds: a run that would start after it
// does not start, and the job ends FAILED.
const StartByParam = "ratchet.start_by"

// StartBy is the start-by deadline job j names in its params, and whether
// it names one (a value that does not parse names none).
func StartBy(j *Job) (time.Time, bool) {
	v, found := j.Params[StartByParam]
	if !found {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
