package ratchet

import (
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Job is a job as stored: status, attempts, errors, result and options.
type Job = spi.Job

// Status is a job's lifecycle state.
type Status = spi.Status

// Priority is a job's priority level.
type Priority = spi.Priority

// BackoffKind selects how retry delays grow.
type BackoffKind = spi.BackoffKind

// Job states.
const (
	StatusPending   = spi.StatusPending
	StatusRunning   = spi.StatusRunning
	StatusSucceeded = spi.StatusSucceeded
	StatusFailed    = spi.StatusFailed
	StatusCancelled = spi.StatusCancelled
	StatusBlocked   = spi.StatusBlocked
	StatusSkipped   = spi.StatusSkipped
)

// Priority levels; NORMAL is the default.
const (
	PriorityLowest   = spi.PriorityLowest
	PriorityLow      = spi.PriorityLow
	PriorityNormal   = spi.PriorityNormal
	PriorityHigh     = spi.PriorityHigh
	PriorityCritical = spi.PriorityCritical
)

// Backoff kinds.
const (
	BackoffNone        = spi.BackoffNone
	BackoffFixed       = spi.BackoffFixed
	BackoffExponential = spi.BackoffExponential
)

// Defaults applied to a submission when neither the task nor the submission
// sets them.
const (
	DefaultMaxRetries      = 3
	DefaultBackoff         = BackoffExponential
	DefaultBackoffBase     = time.Second
	DefaultMaxPayloadBytes = 100 * 1024
)

// Clock is the time source of a Client. clockwork.Clock satisfies it; the
// zero ClientOptions use the system clock.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
