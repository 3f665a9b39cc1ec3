package engine

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// outcomes turns what a body returned into the owner write that ends its
// job (CompletionOf: the retry decision, the sanitized error) and encodes a
// success's result. It is pure but for the metrics and logs it reports.
type outcomes struct {
	clock     clockwork.Clock
	policy    spi.RetryPolicy
	sanitizer spi.ErrorSanitizer
	metrics   metricsOf
	results   ratchet.ResultStrategy
	pipe      *ratchet.Pipeline
	// jitter is the retry jitter of each task (Task.RetryJitter, else
	// Options.RetryJitter); draw, a uniform draw in [0, 1) (rand.Float64).
	jitter map[string]float64
	draw   func() float64
}

func (o outcomes) finish(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, res any, err error, started time.Time) nodecore.Pending {
	now := o.clock.Now().UTC().Truncate(time.Microsecond)
	if jc != nil {
		err = jc.Returned(err)
	}
	c := nodecore.CompletionOf(j, err, o.policy, o.sanitizer, now)
	if f := o.jitter[j.TaskName]; f > 0 && c.Outcome == spi.OutcomeRetry {
		c = nodecore.Jittered(c, now, f, o.draw())
	}
	switch c.Outcome {
	case spi.OutcomeSucceeded:
		if res != nil {
			c.Result, c.ResultType = o.result(ctx, jc, j, res)
		}
		o.metrics.JobCompleted(ctx, j.ID, j.TaskName, o.clock.Since(started))
	case spi.OutcomeSnoozed:
		if m, ok := o.metrics.MetricsCollector.(spi.SnoozeMetrics); ok {
			m.JobSnoozed(ctx, j.ID, j.TaskName, c.RetryAt.Sub(now))
		}
		jc.Logger.Info("job snoozed", "until", c.RetryAt, "snoozes", c.Snoozes)
	case spi.OutcomeWaiting:
		if m, ok := o.metrics.MetricsCollector.(spi.SignalMetrics); ok {
			m.SignalWaiting(ctx, j.ID, j.TaskName, c.Signal.Name)
		}
		jc.Logger.Info("job waiting for a signal", "signal", c.Signal.Name, "key", c.Signal.Key, "deadline", c.Signal.Deadline)
	case spi.OutcomeRetry:
		o.failed(ctx, j, err, c.Attempts)
		jc.Logger.Info("job failed; retrying", "err", c.LastError, "retry_at", c.RetryAt)
	default:
		o.failed(ctx, j, err, c.Attempts)
		jc.Logger.Warn("job failed; moved to the dead-letter queue", "err", c.LastError)
	}
	return nodecore.Pending{C: c, Job: j}
}

// failed reports a failed run, as a callback's too for a callback job.
func (o outcomes) failed(ctx context.Context, j *spi.Job, err error, attempt int) {
	o.metrics.JobFailed(ctx, j.ID, j.TaskName, err, attempt)
	if isCallback(j) {
		o.metrics.cb.CallbackFailed(ctx, j.ID, j.TaskName, err, attempt)
	}
}

// result serializes a body's result through the result strategy and the
// codecs; a result that does not serialize is not stored, with a warning.
func (o outcomes) result(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, res any) ([]byte, string) {
	sr, err := o.results.SerializeResult(ctx, j.ID, res)
	if err == nil && sr.Data != nil {
		sr.Data, err = o.pipe.EncodeBytes(ctx, ratchet.JobRef(ratchet.SurfaceResult, j.ID), j.TaskName, sr.Data)
	}
	if err != nil {
		jc.Logger.Warn("result not stored: it does not serialize; the job still succeeds", "err", err)
		o.metrics.fin.SuccessFinalizationMinimal(ctx, j.ID, j.TaskName)
		return nil, ""
	}
	if sr.Data == nil {
		return nil, ""
	}
	return sr.Data, sr.Type
}
