package engine

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// outcomes turns what a body returned into the owner write that ends its
// job: the result encoded, or the retry decision (DecideRetry) with the
// sanitized error. It is pure but for the metrics and logs it reports.
type outcomes struct {
	clock     clockwork.Clock
	policy    spi.RetryPolicy
	sanitizer spi.ErrorSanitizer
	metrics   spi.MetricsCollector
	results   ratchet.ResultStrategy
	pipe      *ratchet.Pipeline
}

func (o outcomes) finish(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, res any, err error, started time.Time) pendingCompletion {
	now := o.clock.Now().UTC().Truncate(time.Microsecond)
	c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, FinishedAt: now}
	if err == nil {
		c.Outcome = spi.OutcomeSucceeded
		if res != nil {
			c.Result, c.ResultType = o.result(ctx, jc, j, res)
		}
		c.Attempts = j.Attempts + 1 // reported in events; not written on success
		o.metrics.JobCompleted(j.ID, j.TaskName, o.clock.Since(started))
		return pendingCompletion{c: c, job: j}
	}
	d := DecideRetry(j, err, o.policy, now)
	c.Attempts = d.Attempt
	c.LastError = o.sanitizer.Sanitize(err)
	o.metrics.JobFailed(j.ID, j.TaskName, err, d.Attempt)
	if d.Retry {
		c.Outcome, c.RetryAt = spi.OutcomeRetry, d.RetryAt
		jc.Logger.Info("job failed; retrying", "err", c.LastError, "retry_at", d.RetryAt)
	} else {
		c.Outcome = spi.OutcomeFailed
		jc.Logger.Warn("job failed; moved to the dead-letter queue", "err", c.LastError)
	}
	return pendingCompletion{c: c, job: j}
}

// result serializes a body's result through the result strategy and the
// codecs; a result that does not serialize is not stored, with a warning.
func (o outcomes) result(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, res any) ([]byte, string) {
	sr, err := o.results.SerializeResult(ctx, j.ID, res)
	if err == nil && sr.Data != nil {
		sr.Data, err = o.pipe.EncodeBytes(ctx, ratchet.SurfaceResult, j.TaskName, sr.Data)
	}
	if err != nil {
		jc.Logger.Warn("result not stored: it does not serialize; the job still succeeds", "err", err)
		return nil, ""
	}
	if sr.Data == nil {
		return nil, ""
	}
	return sr.Data, sr.Type
}
