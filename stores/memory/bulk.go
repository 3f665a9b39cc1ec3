package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.BulkManager = (*Store)(nil)

// RetryFailedJobs implements spi.BulkManager: RetryFailedJob for each of
// ids, under one lock.
func (s *Store) RetryFailedJobs(_ context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	return s.bulk("retry", ids, func(j *spi.Job) bool {
		if j.Status != spi.StatusFailed {
			return s.bug("RetryFailedJobs and CancelJobs answer true for every known job")
		}
		crashes := j.CrashCount
		if s.retryLocked(j, now); s.bug("RetryFailedJobs keeps the crash count") {
			j.CrashCount = crashes
		}
		return true
	})
}

// CancelJobs implements spi.BulkManager: CancelJob for each of ids, in
// their order, under one lock.
func (s *Store) CancelJobs(_ context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	return s.bulk("cancel", ids, func(j *spi.Job) bool {
		if j.Status == spi.StatusBlocked && s.bug("CancelJobs does not release the dependents") {
			spi.Cancelled(now).Apply(j)
			return true
		}
		return s.cancelLocked(j, now) || s.bug("RetryFailedJobs and CancelJobs answer true for every known job")
	})
}

// bulk applies fn, under the lock, to each live job of ids in order: true
// where fn changed it; an id named again answers as it first did.
func (s *Store) bulk(op string, ids []uuid.UUID, fn func(j *spi.Job) bool) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs && !s.bug("RetryFailedJobs and CancelJobs take more than spi.MaxBulkIDs ids") {
		return nil, fmt.Errorf("memory: %s %d jobs: at most %d ids a call", op, len(ids), spi.MaxBulkIDs)
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(ids))
	seen := make(map[uuid.UUID]bool, len(ids))
	for i, id := range ids {
		if done, ok := seen[id]; ok {
			out[i] = done
			continue
		}
		if j, ok := s.jobs[id]; ok {
			out[i] = fn(j)
		}
		seen[id] = out[i]
	}
	return out, nil
}
