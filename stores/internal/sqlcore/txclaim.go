package sqlcore

import (
	"context"
	"database/sql"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TxClaims implements spi.Store.ClaimJobs for the stores that claim in one
// transaction of their own, run by InTx with the store's retries, whose
// COMMIT may fail with its outcome unknown (SQL Server, Oracle). A store
// embeds it (under a local alias, so the field stays unexported) and fills
// it when it builds itself; its dialect supplies one run of the claim and
// the read that adopts the jobs of a claim whose COMMIT failed.
type TxClaims struct {
	Gate *Gate
	// InTx runs fn in a transaction, again after a retryable error (the
	// store's InTx).
	InTx func(ctx context.Context, fn func(tx *sql.Tx, at Attempt) error) error
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// Once runs one claim of p at now in tx and records in *tried the ids
	// of the jobs it moved to RUNNING.
	Once func(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time, tried *[][]byte) ([]*spi.Job, error)
	// Adopt reads which of ids are RUNNING for node, claimed at now: the
	// jobs of a claim whose COMMIT did apply.
	Adopt func(ctx context.Context, tx *sql.Tx, ids [][]byte, node string, now time.Time) ([]*spi.Job, error)
}

// ClaimJobs moves up to p.Limit due PENDING jobs of p.Tasks to RUNNING for
// p.NodeID and returns them in claim order: effective priority
// descending, scheduled time ascending, id ascending. Only jobs passing
// p.Tags are considered, and jobs whose resource has no free permit are
// skipped (the store's doc says how its dialect reads and locks them).
//
// A deadlock, a lock timeout or a lost connection runs the transaction
// again, up to the store's retries. When the COMMIT itself failed, so that
// the jobs may have been claimed, the next run first adopts those of them
// that are RUNNING under p.NodeID at p.Now (see [Adopting]): no job is left
// claimed by a node that never heard of it. A claimed row that cannot be
// read back as a job is failed into the dead-letter queue with the problem
// as its last error and left out of the result. It implements [spi.Store].
func (c TxClaims) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := c.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	now := p.Now.UTC().Truncate(time.Microsecond)
	var out []*spi.Job
	err = c.InTx(ctx, Adopting(
		func(tx *sql.Tx, tried *[][]byte) ([]*spi.Job, error) { return c.Once(ctx, tx, p, now, tried) },
		func(tx *sql.Tx, ids [][]byte) ([]*spi.Job, error) { return c.Adopt(ctx, tx, ids, p.NodeID, now) },
		&out))
	if err != nil {
		return nil, c.Fail("claim jobs", err)
	}
	SortClaimed(out, now, p.BoostInterval)
	return out, nil
}
