package spi

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
)

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

// The params of a start-by deadline: StartByParam holds a job's deadline
// (ratchet.WithStartBy), a UTC time in RFC 3339 with nanoseconds, and
// StartWithinParam a Go duration (ratchet.WithStartWithin): how long after
// it is due a run may still start. A run that would start after either
// does not start, and the job ends FAILED.
const (
	StartByParam     = "ratchet.start_by"
	StartWithinParam = "ratchet.start_within"
)

// StartBy is the time by which a run of job j must start: its start-by
// deadline, or the time it is due (ScheduledAt) plus its start-within
// window, whichever is earlier; and whether it names either (a value that
// does not parse names nothing).
func StartBy(j *Job) (time.Time, bool) {
	var by time.Time
	if v, found := j.Params[StartByParam]; found {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			by = t
		}
	}
	if v, found := j.Params[StartWithinParam]; found {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			if t := j.ScheduledAt.Add(d); by.IsZero() || t.Before(by) {
				by = t
			}
		}
	}
	return by, !by.IsZero()
}

// MaxSnoozesParam holds how many times a job may snooze
// (ratchet.WithMaxSnoozes), a decimal count; DefaultMaxSnoozes holds
// without it.
const (
	MaxSnoozesParam   = "ratchet.max_snoozes"
	DefaultMaxSnoozes = 100
)

// MaxSnoozes is how many times job j may snooze: its MaxSnoozesParam, or
// DefaultMaxSnoozes when it names none (or a value that does not parse).
func MaxSnoozes(j *Job) int {
	if v, found := j.Params[MaxSnoozesParam]; found {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n
		}
	}
	return DefaultMaxSnoozes
}

// StartByProperty is the job property that holds, from its submission, the
// start-by deadline of a job's first run (StartBy of the job as inserted),
// written by FormatStartBy so that its text sorts as its time: a store with
// a StartBySweeper finds the jobs past it by a range read of its property
// index, without reading every PENDING job.
const StartByProperty = "ratchet.start_by"

// FormatStartBy writes t as StartByProperty holds it: UTC, to the
// microsecond, always 27 characters.
func FormatStartBy(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// StartByCursor is where a page of StartBySweeper.UnstartedJobs starts:
// after the job whose StartByProperty is Value and id ID (the zero
// cursor: from the first).
type StartByCursor struct {
	Value string
	ID    uuid.UUID
}

// Expiry is the failure of a PENDING job that was not started by its
// start-by deadline: the job, as read under the claim sequence it still
// has, and the error it ends with.
type Expiry struct {
	ClaimRef
	LastError string
}

// StartBySweeper is implemented by stores that can find and fail the
// PENDING jobs past their start-by deadline that no node claims (the
// engine's start-by sweeper; a claim decides for the jobs it takes).
type StartBySweeper interface {
	// UnstartedJobs returns up to limit PENDING jobs whose
	// StartByProperty is before before, after the cursor, and the cursor
	// of the next page (the zero cursor when there is none). The order is
	// the store's and stays the same from page to page: by the property,
	// then id, or by id alone (MongoDB, whose cursor then carries the id
	// only). Each job is read whole (its params and due time decide its
	// deadline, StartBy).
	UnstartedJobs(ctx context.Context, before time.Time, after StartByCursor, limit int) ([]*Job, StartByCursor, error)
	// ExpireJobs fails at now each job of es that is still PENDING under
	// its claim sequence (Failed from PENDING: FAILED with its LastError,
	// finished at now, its attempts unchanged; its dependents released
	// as after any failure), and reports, per entry, whether it applied.
	ExpireJobs(ctx context.Context, es []Expiry, now time.Time) ([]bool, error)
}
