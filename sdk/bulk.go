package ratchet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// BulkAction is what Client.Bulk does to each job of a set.
type BulkAction int

// The bulk actions.
const (
	// BulkRetry moves FAILED jobs out of the dead-letter queue, as
	// Client.RetryJob does: bulkBatch jobs per store call on a store with
	// spi.BulkManager, else one job per call.
	BulkRetry BulkAction = iota + 1
	// BulkCancel cancels PENDING, BLOCKED, WAITING and RUNNING jobs, as
	// Client.CancelJob does: bulkBatch jobs per store call on a store
	// with spi.BulkManager, else one job per call.
	BulkCancel
	// BulkDelete deletes finished jobs for good (Client.DeleteJobs),
	// bulkDeleteBatch jobs per store call.
	BulkDelete
)

// bulkDeleteBatch is how many ids a BulkDelete hands the store per call.
const bulkDeleteBatch = 500

// bulkBatch is how many ids a BulkRetry or a BulkCancel hands the store
// per call when the store has spi.BulkManager: spi.MaxBulkIDs.
const bulkBatch = spi.MaxBulkIDs

// DefaultBulkWorkers is how many store calls Bulk makes at once when
// BulkOptions.Workers is zero.
const DefaultBulkWorkers = 8

// String names the action: "retry", "cancel" or "delete".
func (a BulkAction) String() string {
	switch a {
	case BulkRetry:
		return "retry"
	case BulkCancel:
		return "cancel"
	case BulkDelete:
		return "delete"
	}
	return fmt.Sprintf("BulkAction(%d)", int(a))
}

// BulkOptions tune Client.Bulk. The zero value is ready to use.
type BulkOptions struct {
	// Workers is how many store calls run at once; zero means
	// DefaultBulkWorkers (8), a negative value is an error.
	Workers int
	// Progress, when not nil, is told after each store call how many ids
	// that call handled (changed or skipped). Calls are serial, never
	// concurrent, so it may update a progress bar without a lock.
	Progress func(n int)
}

// BulkResult counts what Client.Bulk did.
type BulkResult struct {
	// Changed counts the jobs the action changed.
	Changed int
	// Skipped counts the jobs that had moved on since the ids were taken
	// (retried, cancelled, finished or deleted by someone else; for a
	// delete, also a job the store may not delete yet): the action does
	// not apply to them, which is not an error.
	Skipped int
	// SkippedIDs are the ids of the skipped jobs, in no particular order:
	// reading them again says why each was skipped (its state now, or
	// gone).
	SkippedIDs []uuid.UUID
}

// MatchingJobs returns the ids, in id order, of every live job that o's
// filters match now: a snapshot for a bulk action. It reads them page by
// page (o.After and o.Limit are ignored) up to an id minted when it
// starts, so that jobs submitted while it reads are left out, however
// fast they arrive. A filter that matches nothing gives no ids and no
// error.
func (c *Client) MatchingJobs(ctx context.Context, o ListOptions) ([]uuid.UUID, error) {
	return c.MatchingJobsBefore(ctx, o, c.NewJobID())
}

// MatchingJobsBefore is MatchingJobs bounded by an id taken earlier (by
// NewJobID): the jobs o matches whose id is at most bound, that is, that
// were submitted before bound was minted. A dashboard mints the bound when
// it shows the count for confirmation, so that the action confirmed acts
// on no job that was submitted after. A bound later than now is taken as
// now; the zero bound as now too.
func (c *Client) MatchingJobsBefore(ctx context.Context, o ListOptions, bound uuid.UUID) ([]uuid.UUID, error) {
	if now := c.NewJobID(); bound == uuid.Nil || bytes.Compare(bound[:], now[:]) > 0 {
		bound = now
	}
	o.After, o.Limit, o.IncludeArchived = uuid.Nil, 10000, false
	var ids []uuid.UUID
	for {
		page, err := c.ListJobs(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("ratchet: matching jobs: %w", err)
		}
		for _, j := range page.Jobs {
			if bytes.Compare(j.ID[:], bound[:]) > 0 {
				return ids, nil
			}
			ids = append(ids, j.ID)
		}
		if page.Next == uuid.Nil {
			return ids, nil
		}
		o.After = page.Next
	}
}

// Bulk applies action to each of ids, o.Workers store calls at once, and
// counts the jobs it changed and those it skipped because they had moved
// on (false from the store's batch call; for the one-job calls, an error
// wrapping ErrInvalidState or ErrNotFound). Any other error stops it: it
// returns that error with the counts so far. Take ids with MatchingJobs
// to act on everything a filter matches.
//
// A retry or a cancel hands the store bulkBatch ids per call (one
// transaction each, on a SQL store) when it has spi.BulkManager, else one
// job per call (Client.RetryJob, Client.CancelJob); the effect on each job
// is the same. A batched retry wakes the idle pollers once per batch that
// changed a job. A delete hands the store bulkDeleteBatch ids per call.
func (c *Client) Bulk(ctx context.Context, action BulkAction, ids []uuid.UUID, o BulkOptions) (BulkResult, error) {
	var act func(ctx context.Context, ids []uuid.UUID) ([]bool, error)
	per := 1
	bm := spi.CapabilitiesOf(c.store).Bulk
	switch action {
	case BulkRetry:
		act = func(ctx context.Context, ids []uuid.UUID) ([]bool, error) { return eachJob(ctx, ids, c.RetryJob) }
		if bm != nil {
			act, per = func(ctx context.Context, ids []uuid.UUID) ([]bool, error) { return c.retryBatch(ctx, bm, ids) }, bulkBatch
		}
	case BulkCancel:
		act = func(ctx context.Context, ids []uuid.UUID) ([]bool, error) { return eachJob(ctx, ids, c.CancelJob) }
		if bm != nil {
			act, per = func(ctx context.Context, ids []uuid.UUID) ([]bool, error) { return c.cancelBatch(ctx, bm, ids) }, bulkBatch
		}
	case BulkDelete:
		act, per = c.DeleteJobs, bulkDeleteBatch
	default:
		return BulkResult{}, invalidArg("unknown bulk action %d", int(action))
	}
	workers := o.Workers
	switch {
	case workers < 0:
		return BulkResult{}, invalidArg("bulk %s: %d workers", action, workers)
	case workers == 0:
		workers = DefaultBulkWorkers
	}
	res, err := apply(ctx, ids, per, workers, act, o.Progress)
	if err != nil {
		return res, fmt.Errorf("ratchet: bulk %s: %w", action, err)
	}
	return res, nil
}

// retryBatch retries the FAILED jobs of ids in one store call and, when it
// changed one, wakes the idle pollers once (at the most urgent priority:
// the jobs' own are not read back).
func (c *Client) retryBatch(ctx context.Context, bm spi.BulkManager, ids []uuid.UUID) ([]bool, error) {
	out, err := bm.RetryFailedJobs(ctx, ids, c.now())
	if err != nil {
		return nil, err
	}
	if c.notifier != nil && slices.Contains(out, true) {
		c.notifier.NotifyNewWork(PriorityCritical)
	}
	return out, nil
}

// cancelBatch cancels the jobs of ids in one store call. With signal
// metrics, it reads each job first, as CancelJob does, to report the waits
// that the cancel ended.
func (c *Client) cancelBatch(ctx context.Context, bm spi.BulkManager, ids []uuid.UUID) ([]bool, error) {
	sm := c.signalMetrics
	var waiting map[int]*spi.Job
	if sm != nil {
		waiting = map[int]*spi.Job{}
		for i, id := range ids {
			if j, err := c.store.GetJob(ctx, id); err == nil && j.Status == spi.StatusWaiting && j.Signal != nil {
				waiting[i] = j
			}
		}
	}
	out, err := bm.CancelJobs(ctx, ids, c.now())
	if err != nil {
		return nil, err
	}
	if slices.Contains(out, true) {
		c.claimsChanged(ctx)
	}
	told := map[uuid.UUID]bool{}
	for i, j := range waiting {
		if i < len(out) && out[i] && !told[j.ID] {
			told[j.ID] = true
			sm.SignalCancelled(ctx, j.ID, j.TaskName, j.Signal.Name)
		}
	}
	return out, nil
}

// eachJob runs fn on each of ids: true where it changed the job, false
// where the job moved on (ErrInvalidState, ErrNotFound); another error
// stops it.
func eachJob(ctx context.Context, ids []uuid.UUID, fn func(context.Context, uuid.UUID) error) ([]bool, error) {
	out := make([]bool, len(ids))
	for i, id := range ids {
		switch err := fn(ctx, id); {
		case err == nil:
			out[i] = true
		case errors.Is(err, ErrInvalidState) || errors.Is(err, ErrNotFound):
		default:
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// apply runs act on ids, per ids in each call and workers calls at once,
// and counts the ids act changed and those it skipped. It stops at the
// first error.
func apply(ctx context.Context, ids []uuid.UUID, per, workers int,
	act func(context.Context, []uuid.UUID) ([]bool, error), progress func(n int)) (res BulkResult, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan []uuid.UUID)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(workers, (len(ids)+per-1)/per) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range next {
				if ctx.Err() != nil {
					continue // stopped: drain what the feeder already handed over
				}
				changed, e := act(ctx, chunk)
				mu.Lock()
				switch {
				case e != nil:
					if err == nil {
						err = e
						cancel()
					}
				case len(changed) != len(chunk):
					if err == nil {
						err = fmt.Errorf("%d answers for %d jobs", len(changed), len(chunk))
						cancel()
					}
				default:
					for i, ok := range changed {
						if ok {
							res.Changed++
						} else {
							res.Skipped++
							res.SkippedIDs = append(res.SkippedIDs, chunk[i])
						}
					}
					if progress != nil {
						progress(len(chunk))
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for start := 0; start < len(ids); start += per {
		select {
		case next <- ids[start:min(start+per, len(ids))]:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}
