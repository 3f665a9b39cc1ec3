package nodecore

import (
	"errors"
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
	// Attempt is the job's stored attempt count after the execution: the
	// failed attempt's number, 1-based (the count so far when a circuit
	// breaker refused the run).
	Attempt int
}

// DecideRetry applies the spec's retry path to a job that failed with err at
// now: a run that an open circuit breaker refused (an *spi.CircuitOpenError
// in the chain) goes back to PENDING after its retry delay, not charged an
// attempt; DoNotRetry anywhere in the chain fails it; otherwise it is
// retried when policy.ShouldRetry agrees and attempt <= MaxRetries, after
// policy.Delay(attempt) or, when that is zero, the job's own backoff.
func DecideRetry(j *spi.Job, err error, policy spi.RetryPolicy, now time.Time) Decision {
	var open *spi.CircuitOpenError
	if errors.As(err, &open) { // refused by a circuit breaker: the body did not run
		return Decision{Retry: true, RetryAt: now.Add(open.RetryAfter), Attempt: j.Attempts}
	}
	attempt := j.Attempts + 1
	d := Decision{Attempt: attempt}
	if ratchet.IsDoNotRetry(err) {
		return d
	}
	limit := j.MaxRetries
	if bug("retry-off-by-one") { // planted: < where <= is meant, one retry too many
		limit++
	}
	if !policy.ShouldRetry(attempt, err) || attempt > limit {
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
