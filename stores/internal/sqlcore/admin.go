package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// AdminWrites implements spi.Store.RetryFailedJob and CancelJob for the
// database/sql stores: one guarded UPDATE each in a transaction, and when
// it changed nothing, a read of the job's status that says why. A store
// embeds it (under a local alias) and fills it when it builds itself.
type AdminWrites struct {
	Gate *Gate
	// InTx runs fn in a transaction with the store's retries.
	InTx func(ctx context.Context, fn func(tx *sql.Tx) error) error
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// RetrySQL moves job id from FAILED to PENDING due at now: error
	// cleared, attempts and crash count zero, finish time and owner
	// cleared.
	RetrySQL func(id uuid.UUID, now time.Time) (string, []any)
	// CancelSQL moves job id from PENDING to CANCELLED, finished at now.
	CancelSQL func(id uuid.UUID, now time.Time) (string, []any)
	// StatusSQL reads the status of job id.
	StatusSQL func(id uuid.UUID) (string, []any)
}

// RetryFailedJob moves a FAILED job out of the dead-letter queue: status
// PENDING due at now, last error cleared, attempts and crash count zero,
// finish time and owner cleared. It wraps spi.ErrNotFound for an unknown id
// and spi.ErrInvalidState, naming the actual status, for a job that is not
// FAILED. It implements [spi.Store].
func (a AdminWrites) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	return a.transition(ctx, "retry job", a.RetrySQL, id, now, spi.StatusFailed, "retried")
}

// CancelJob moves a PENDING job to CANCELLED with its finish time at now.
// It wraps spi.ErrNotFound for an unknown id and spi.ErrInvalidState,
// naming the actual status, for a job in any other state. It implements
// [spi.Store].
func (a AdminWrites) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	return a.transition(ctx, "cancel job", a.CancelSQL, id, now, spi.StatusPending, "cancelled")
}

func (a AdminWrites) transition(ctx context.Context, op string, update func(uuid.UUID, time.Time) (string, []any), id uuid.UUID, now time.Time, from spi.Status, verb string) error {
	done, err := a.Gate.Enter()
	if err != nil {
		return err
	}
	defer done()
	err = a.InTx(ctx, func(tx *sql.Tx) error {
		query, args := update(id, now)
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var st string
		query, args = a.StatusSQL(id)
		err = tx.QueryRowContext(ctx, query, args...).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: job %s is %s, only %s jobs can be %s", spi.ErrInvalidState, id, st, from, verb)
	})
	if err != nil {
		return a.Fail(op, err)
	}
	return nil
}
