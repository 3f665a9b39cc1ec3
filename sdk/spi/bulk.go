package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// MaxBulkIDs is the most ids one call of a BulkManager method may name.
// Every store that implements BulkManager takes a call of this many ids
// (within its database's limits on an id list); a caller with more cuts
// them into calls of at most MaxBulkIDs.
const MaxBulkIDs = 500

// BulkManager is implemented by stores that retry and cancel many jobs in
// one call (an operator's `ratchet dlq retry`, the dashboard's "retry all
// that match"): the same per-job effects as RetryFailedJob and CancelJob,
// one call, and on a store with transactions one transaction, per batch
// of ids.
//
// Each method returns, for each id in order, true where it changed the job
// and false where the job is in a state the action does not apply to, is
// unknown or is archived (the case where the single-job method wraps
// spi.ErrInvalidState or spi.ErrNotFound: not an error here). An id named
// twice in one call answers as its first occurrence. A call with more
// than MaxBulkIDs ids fails with no job changed; an error of the
// database fails the call (on a store with transactions, with no job
// changed).
type BulkManager interface {
	// RetryFailedJobs is RetryFailedJob for each of ids: each FAILED job
	// goes back to PENDING due at now, its last error cleared, its attempts
	// and crash count zero, its finish time and owner cleared, and the
	// dependents its failure cancelled or skipped wait for it again.
	RetryFailedJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error)
	// CancelJobs is CancelJob for each of ids, in their order: each
	// PENDING, BLOCKED, WAITING or RUNNING job becomes CANCELLED, finished
	// at now; the wait of a WAITING job ends CANCELLED, the claim of a
	// RUNNING one ends (its claim sequence one more, no owner), and its
	// dependents follow their cancel policy, as when a parent is
	// cancelled.
	CancelJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error)
}
