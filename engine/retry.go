package engine

import (
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultRetryPolicy always allows a retry and never sets a delay, deferring
// to each job's MaxRetries and backoff.
type DefaultRetryPolicy struct{}

// ShouldRetry returns true.
func (DefaultRetryPolicy) ShouldRetry(int, error) bool { return true }

// Delay returns zero.
func (DefaultRetryPolicy) Delay(int) time.Duration { return 0 }

// Decision is the outcome of a failed execution.
type Decision struct {
	// Retry is true when the job goes back to PENDING at RetryAt.
	Retry   bool
	RetryAt time.Time
	// Attempt is the failed attempt's number, 1-based; it becomes the job's
	// stored attempt count.
	Attempt int
}

// DecideRetry applies the spec's retry path to a job that failed with err at
// now: DoNotRetry anywhere in the chain fails it; otherwise it is retried
// when policy.ShouldRetry agrees and attempt <= MaxRetries, after
// policy.Delay(attempt) or, when that is zero, the job's own backoff.
func DecideRetry(j *spi.Job, err error, policy spi.RetryPolicy, now time.Time) Decision {
	attempt := j.Attempts + 1
	d := Decision{Attempt: attempt}
	if ratchet.IsDoNotRetry(err) {
		return d
	}
	if !policy.ShouldRetry(attempt, err) || attempt > j.MaxRetries {
		return d
	}
	delay := policy.Delay(attempt)
	if delay <= 0 {
		delay = j.Backoff.Delay(j.BackoffParam, attempt)
	}
	d.Retry = true
	d.RetryAt = now.Add(delay)
	return d
}
