package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// RetryFailedJob moves a FAILED job out of the dead-letter queue: status
// PENDING due at now, last error cleared, attempts and crash count zero,
// finish time and owner cleared, and publishes a wakeup. It wraps
// spi.ErrNotFound for an unknown id and spi.ErrInvalidState, naming the
// actual status, for a job that is not FAILED. One statement.
func (s *Store) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.transition(ctx, s.sql.retryFailed, id, now, spi.StatusFailed, "retried"); err != nil {
		return fail("retry job", err)
	}
	return nil
}

// CancelJob moves a PENDING job to CANCELLED with its finish time at now. It
// wraps spi.ErrNotFound for an unknown id and spi.ErrInvalidState, naming the
// actual status, for a job in any other state. One statement.
func (s *Store) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.transition(ctx, s.sql.cancel, id, nullTime(now), spi.StatusPending, "cancelled"); err != nil {
		return fail("cancel job", err)
	}
	return nil
}

// transition runs an UPDATE guarded by status = want that returns the job's
// priority when it applied and the job's status as it was before; it
// explains a transition that did not apply, and wakes pollers after a
// transition to PENDING.
func (s *Store) transition(ctx context.Context, q string, id uuid.UUID, now any, want spi.Status, verb string) error {
	var prio *int32
	var status *string
	if err := s.pool.QueryRow(ctx, q, pgUUID(id), now).Scan(&prio, &status); err != nil {
		return err
	}
	switch {
	case prio != nil:
		if want == spi.StatusFailed {
			s.wake(ctx, *prio)
		}
		return nil
	case status == nil:
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	default:
		return fmt.Errorf("%w: job %s is %s, only %s jobs can be %s", spi.ErrInvalidState, id, *status, want, verb)
	}
}
