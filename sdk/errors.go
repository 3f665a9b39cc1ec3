package ratchet

import (
	"errors"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var (
	// ErrNotFound reports that no job has the given id.
	ErrNotFound = spi.ErrNotFound
	// ErrInvalidState reports an operation the job's state does not allow.
	ErrInvalidState = spi.ErrInvalidState
	// ErrInvalidArgument reports a bad submission or option: a nil task, a
	// negative delay, an out-of-range priority and the like.
	ErrInvalidArgument = errors.New("ratchet: invalid argument")
	// ErrSuperseded reports a fenced write of a run that no longer owns its
	// job: it was recovered by another node or released by a stop. The
	// body should stop; nothing it writes will apply.
	ErrSuperseded = errors.New("ratchet: superseded: this run no longer owns the job")
	// ErrStateConflict reports a job-state write whose expected version did
	// not match (or an init of state that exists): read it again and retry.
	ErrStateConflict = errors.New("ratchet: job state changed meanwhile")
	// ErrUnsupported reports a feature the store does not have.
	ErrUnsupported = errors.New("ratchet: not supported by the store")
	// ErrTimeout is wrapped by the error of a run that went past its run
	// timeout (WithTimeout, engine.Options.RunTimeout): the run ended as a
	// failure, retried like any other unless the timeout is final, and the
	// body's context ended with it as its cause.
	ErrTimeout = errors.New("ratchet: run timed out")
	// ErrExpired is wrapped by the error of a job that was not started by
	// its start-by deadline (WithStartBy): it ended FAILED, not retried,
	// without its body running.
	ErrExpired = errors.New("ratchet: start-by deadline passed")
	// ErrTooManySnoozes is wrapped by the error of a job that asked to
	// snooze (Snooze) more times than it may (WithMaxSnoozes): it ended
	// FAILED, not retried.
	ErrTooManySnoozes = errors.New("ratchet: snoozed too many times")
)

// PayloadTooLargeError reports a serialized payload over the configured
// limit. Nothing was written.
type PayloadTooLargeError struct {
	Surface string // what was measured, e.g. "task"
	Task    string
	Size    int // bytes
	Limit   int // bytes
}

// Error describes the failure.
func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("ratchet: %s payload of %q is %d bytes, over the limit of %d bytes", e.Surface, e.Task, e.Size, e.Limit)
}

// UnknownTaskError reports a job whose task name no registered task has.
type UnknownTaskError struct {
	Name string
}

// Error describes the failure.
func (e *UnknownTaskError) Error() string {
	return fmt.Sprintf("ratchet: unknown task %q (not registered with this engine)", e.Name)
}

// DoNotRetryError marks a failure as permanent: the job goes straight to the
// dead-letter queue whatever its retry settings. Create one with DoNotRetry.
type DoNotRetryError struct {
	Err error
}

// Error describes the failure.
func (e *DoNotRetryError) Error() string {
	if e.Err == nil {
		return "do not retry"
	}
	return "do not retry: " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *DoNotRetryError) Unwrap() error { return e.Err }

// DoNotRetry wraps err so that the job fails without retrying. It is found
// anywhere in an error chain, so a task may wrap it further.
func DoNotRetry(err error) error {
	return &DoNotRetryError{Err: err}
}

// IsDoNotRetry reports whether a DoNotRetryError is anywhere in err's chain.
func IsDoNotRetry(err error) bool {
	var d *DoNotRetryError
	return errors.As(err, &d)
}

// SnoozeError is what a body returns to run again later without spending
// an attempt: the job goes back to PENDING, due after Delay, its attempt
// count and last error unchanged and its snooze count one more. Create
// one with Snooze. A job that has snoozed as many times as it may
// (WithMaxSnoozes) fails instead, for good, with an error wrapping
// ErrTooManySnoozes.
type SnoozeError struct {
	Delay time.Duration
}

// Error describes the snooze.
func (e *SnoozeError) Error() string { return fmt.Sprintf("ratchet: snoozed for %s", e.Delay) }

// Snooze returns the error a body returns to have its job run again after
// d, as if it had not run: no attempt is spent (River's JobSnooze, Oban's
// {:snooze, n}). The slot frees at once. A d of zero or less makes the
// job due at once. It is found anywhere in an error chain, so a task may
// wrap it; a job's middleware sees it as the body's error.
//
// A snooze counts toward the job's bound, WithMaxSnoozes (100 unless
// set): the run that would snooze past it fails the job instead.
func Snooze(d time.Duration) error {
	return &SnoozeError{Delay: max(d, 0)}
}

// SnoozeOf returns the delay of the SnoozeError anywhere in err's chain,
// and whether there is one.
func SnoozeOf(err error) (time.Duration, bool) {
	var s *SnoozeError
	if errors.As(err, &s) {
		return max(s.Delay, 0), true
	}
	return 0, false
}

// PayloadDecodeError reports a stored payload that the codecs cannot open
// (a wrong key, a value tampered with or copied from another job) or that
// does not decode into the task's argument type. It is permanent: the job
// goes to the DLQ.
type PayloadDecodeError struct {
	Task string
	Err  error
}

// Error describes the failure.
func (e *PayloadDecodeError) Error() string {
	return fmt.Sprintf("ratchet: payload of task %q does not decode: %v", e.Task, e.Err)
}

// Unwrap returns the decoder's error.
func (e *PayloadDecodeError) Unwrap() error { return e.Err }

// PanicError reports a task that panicked. It is retried like any error.
type PanicError struct {
	Value any
	Stack string
}

// Error describes the failure.
func (e *PanicError) Error() string { return fmt.Sprintf("task panicked: %v", e.Value) }

func invalidArg(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}
