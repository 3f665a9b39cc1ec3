package tck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's bulk retry and cancel.

var _ spi.BulkManager = (*refStore)(nil)

// The defects of the bulk methods the self-test plants.
const (
	bugBulkRetryKeepsCrash bug = "RetryFailedJobs keeps the crash count"
	bugBulkCancelNoRelease bug = "CancelJobs does not release the dependents"
	bugBulkAnswersTrue     bug = "RetryFailedJobs and CancelJobs answer true for every known job"
	bugBulkNoLimit         bug = "RetryFailedJobs and CancelJobs take more than spi.MaxBulkIDs ids"
)

// RetryFailedJobs implements spi.BulkManager.
func (s *refStore) RetryFailedJobs(_ context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	return s.bulk(ids, func(id uuid.UUID) error {
		return s.retryFailedLocked(id, now)
	})
}

// CancelJobs implements spi.BulkManager.
func (s *refStore) CancelJobs(_ context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	return s.bulk(ids, func(id uuid.UUID) error {
		return s.cancelLocked(id, now)
	})
}

// bulk runs fn, under the lock, on each of ids in order.
func (s *refStore) bulk(ids []uuid.UUID, fn func(uuid.UUID) error) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs {
		return nil, fmt.Errorf("refstore: %d ids, at most %d a call", len(ids), spi.MaxBulkIDs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]bool, len(ids))
	seen := map[uuid.UUID]bool{}
	for i, id := range ids {
		if done, ok := seen[id]; ok {
			out[i] = done
			continue
		}
		switch err := fn(id); {
		case err == nil:
			out[i] = true
		case errors.Is(err, spi.ErrInvalidState):
			out[i] = false
		case errors.Is(err, spi.ErrNotFound):
		default:
			return nil, err
		}
		seen[id] = out[i]
	}
	return out, nil
}
