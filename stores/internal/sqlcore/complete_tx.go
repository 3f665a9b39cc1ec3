package sqlcore

import (
	"context"
	"database/sql"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TxCompletions implements spi.Store.CompleteJobs for the database/sql
// stores whose completions are one transaction of their own, run by InTx
// with the store's retries (SQLite, SQL Server, Oracle). A store embeds it
// (under a local alias) and fills it when it builds itself; its dialect
// supplies the fenced writes and the read of jobs for Recognize.
type TxCompletions struct {
	Gate *Gate
	// InTx runs fn in a transaction, again after a retryable error.
	InTx func(ctx context.Context, fn func(tx *sql.Tx) error) error
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// Write applies in tx the completions of cs at positions pos (the
	// first of each claim, see FirstOfEach), each only while its job is
	// RUNNING with the named claim sequence, and sets out[i] for those
	// that applied.
	Write func(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error
	// Load reads the jobs of ids that exist and can be decoded.
	Load func(ctx context.Context, tx *sql.Tx, ids []uuid.UUID) ([]*spi.Job, error)
}

// CompleteJobs applies a batch of fenced owner writes in one transaction.
// Each applies only while its job is RUNNING with the named claim
// sequence; the result has one entry per completion, true when it applied.
// When one claim appears more than once in the batch, only its first
// completion can apply. SUCCEEDED sets the finish time, result and result
// type; RETRY puts the job back to PENDING at RetryAt with the new attempt
// count and last error and the owner cleared; FAILED sets the attempt
// count, last error and finish time. The claim sequence does not change.
// An unknown outcome fails the whole batch before anything is written.
//
// A retryable error runs the transaction again. A completion whose job
// already shows exactly what it writes (the batch of an earlier run whose
// COMMIT failed, or of an earlier call whose answer was lost) counts as
// applied (see Recognize), so a completion is neither lost nor reported
// superseded because of the retry. It implements [spi.Store].
func (c TxCompletions) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := c.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ValidOutcomes(cs); err != nil {
		return nil, c.Fail("complete jobs", err)
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	pos := FirstOfEach(Refs(cs))
	err = c.InTx(ctx, func(tx *sql.Tx) error {
		clear(out)
		if err := c.Write(ctx, tx, cs, pos, out); err != nil {
			return err
		}
		return Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return c.Load(ctx, tx, ids) })
	})
	if err != nil {
		return nil, c.Fail("complete jobs", err)
	}
	return out, nil
}
