package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// dependencyReader is what the dispatch of a workflow job needs of the
// store.
type dependencyReader interface {
	Dependencies(ctx context.Context, id uuid.UUID) ([]spi.Dependency, error)
}

// gate decides, before its body, whether a released workflow job runs
// (spi.Decide over the states its parents finished in): when it must not,
// it returns the job's owner write (SKIPPED or CANCELLED, the reason as
// its last error) and true. A dependency that cannot be read fails the
// run through the retry path; a condition that this node has not
// registered fails the job.
func (o outcomes) gate(ctx context.Context, deps dependencyReader, jc *ratchet.JobContext, j *spi.Job, started time.Time) (pendingCompletion, bool) {
	if j.DependencyCount == 0 || deps == nil {
		return pendingCompletion{}, false
	}
	ds, err := deps.Dependencies(ctx, j.ID)
	if err != nil {
		return o.finish(ctx, jc, j, nil, fmt.Errorf("ratchet: read the dependencies of job %s: %w", j.ID, err), started), true
	}
	for _, d := range ds {
		if d.Condition != "" {
			return o.finish(ctx, jc, j, nil, ratchet.DoNotRetry(fmt.Errorf("ratchet: workflow condition %q is not registered on this node", d.Condition)), started), true
		}
	}
	decision, reason := spi.Decide(ds)
	if decision == spi.DecideRun {
		return pendingCompletion{}, false
	}
	now := o.clock.Now().UTC().Truncate(time.Microsecond)
	c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeCancelled,
		FinishedAt: now, LastError: reason, HasDependents: j.Dependents > 0}
	if decision == spi.DecideSkip {
		c.Outcome = spi.OutcomeSkipped
	}
	jc.Logger.Info("job not run: "+reason, "status", string(c.Outcome.Status()))
	return pendingCompletion{c: c, job: j}, true
}
