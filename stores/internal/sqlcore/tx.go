package sqlcore

import (
	"context"
	"database/sql"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Attempt describes one run of a transaction to the function it runs.
type Attempt struct {
	// N is the run's number, 1 for the first.
	N int
	// PrevCommitFailed: the run before this one failed in its COMMIT, so
	// its writes may or may not have taken effect.
	PrevCommitFailed bool
	// Uncertain: some earlier run failed in its COMMIT.
	Uncertain bool
}

// CommitError is a failed COMMIT: the transaction may or may not have
// committed. It unwraps to the driver's error, so error classification
// sees through it.
type CommitError struct{ Err error }

// Error says that the commit failed, and why.
func (e *CommitError) Error() string { return "commit: " + e.Err.Error() }

// Unwrap returns the driver's error.
func (e *CommitError) Unwrap() error { return e.Err }

// InTx runs fn in one transaction on db, committing when it returns nil,
// and under r runs the whole transaction again when BEGIN, fn or COMMIT
// fails with an error r accepts. fn learns from its Attempt whether an
// earlier run's commit failed, leaving its outcome unknown.
func InTx(ctx context.Context, db *sql.DB, r Retry, fn func(tx *sql.Tx, at Attempt) error) error {
	var at Attempt
	return r.Do(ctx, func(n int) error {
		at.N = n
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			at.PrevCommitFailed = false
			return err
		}
		err = fn(tx, at)
		at.PrevCommitFailed = false
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			at.PrevCommitFailed, at.Uncertain = true, true
			return &CommitError{err}
		}
		return nil
	})
}

// Adopting is the body of a claim transaction run by InTx that never loses
// the jobs of a claim whose COMMIT failed with its outcome unknown: after
// such a run, the next one first adopts the jobs that run named which are
// RUNNING for this claim (adopt reads them: owned by the node, claimed at
// the claim's time) and returns those; when there are none, the claim did
// not commit, and it claims afresh. claim runs one claim and records in
// *tried the ids it wrote. out receives the claimed jobs of the run.
func Adopting(claim func(tx *sql.Tx, tried *[]uuid.UUID) ([]*spi.Job, error), adopt func(tx *sql.Tx, ids []uuid.UUID) ([]*spi.Job, error), out *[]*spi.Job) func(tx *sql.Tx, at Attempt) error {
	var tried, unsure []uuid.UUID
	return func(tx *sql.Tx, at Attempt) error {
		if at.PrevCommitFailed {
			unsure = tried
		}
		tried, *out = nil, nil
		if len(unsure) > 0 {
			jobs, err := adopt(tx, unsure)
			if err != nil {
				return err
			}
			if len(jobs) > 0 {
				*out, tried = jobs, unsure
				return nil
			}
			unsure = nil // the claim did not commit: claim afresh
		}
		var err error
		*out, err = claim(tx, &tried)
		return err
	}
}
