package sqlcore

import (
	"context"
	"database/sql"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TxInserts implements spi.Store.InsertJobs and spi.TxInserter for the
// database/sql stores whose insert is one function over a transaction
// (SQLite, SQL Server, Oracle). A store embeds it (under a local alias, so
// the field stays unexported) and fills it when it builds itself.
type TxInserts struct {
	Gate *Gate
	// InTx runs fn in a transaction of the store's own, again after an
	// error the store retries for inserts.
	InTx func(ctx context.Context, fn func(tx *sql.Tx) error) error
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// Validate checks a batch before anything is written: spi.ValidateJobs,
	// or the dialect's stricter check.
	Validate func(jobs []*spi.Job) error
	// Insert writes a valid, non-empty batch in tx: it resolves the
	// idempotency keys (Dedupe) and inserts the new jobs with their tags.
	Insert func(ctx context.Context, tx *sql.Tx, jobs []*spi.Job) ([]spi.InsertResult, error)
	// Name names the store in the error for a transaction of another type,
	// for example "the SQLite store".
	Name string
}

// InsertJobs writes new PENDING jobs in one transaction. A job whose
// IdempotencyKey already exists, in the database or earlier in the same
// batch, is not written: its result carries the existing id and
// Duplicate. The stored status is PENDING whatever Job.Status says. An
// invalid job (see Validate) fails the whole batch before anything is
// written, and so does an id that already exists. It implements
// [spi.Store].
func (m TxInserts) InsertJobs(ctx context.Context, jobs []*spi.Job) ([]spi.InsertResult, error) {
	done, err := m.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := m.Validate(jobs); err != nil {
		return nil, m.Fail("insert jobs", err)
	}
	if len(jobs) == 0 {
		return []spi.InsertResult{}, nil
	}
	var res []spi.InsertResult
	err = m.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = m.Insert(ctx, tx, jobs)
		return err
	})
	if err != nil {
		return nil, m.Fail("insert jobs", err)
	}
	return res, nil
}

// InsertJobsTx is InsertJobs inside txAny, a transaction that the
// application began on the store's database handle (or on another handle
// to the same database): the jobs exist only if it commits. txAny must be
// a *sql.Tx. It is not retried: a retryable error leaves the application's
// transaction to roll back and run again. It implements [spi.TxInserter].
func (m TxInserts) InsertJobsTx(ctx context.Context, txAny any, jobs []*spi.Job) ([]spi.InsertResult, error) {
	done, err := m.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	tx, err := SQLTx(txAny, m.Name)
	if err != nil {
		return nil, m.Fail("insert jobs", err)
	}
	if err := m.Validate(jobs); err != nil {
		return nil, m.Fail("insert jobs", err)
	}
	if len(jobs) == 0 {
		return []spi.InsertResult{}, nil
	}
	res, err := m.Insert(ctx, tx, jobs)
	if err != nil {
		return nil, m.Fail("insert jobs", err)
	}
	return res, nil
}
