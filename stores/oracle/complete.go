package oracle

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// current locks the RUNNING jobs among the entries at pos and returns, in
// the order of pos, those whose claim sequence is the entry's: the owner
// writes that apply.
func current(ctx context.Context, tx *sql.Tx, refs []spi.ClaimRef, pos []int) ([]int, error) {
	seqs := map[uuid.UUID]int64{}
	for start := 0; start < len(pos); start += idsPerList {
		chunk := pos[start:min(start+idsPerList, len(pos))]
		ids := make([][]byte, len(chunk))
		for k, i := range chunk {
			ids[k] = dbID(refs[i].JobID)
		}
		query, args := lockRunningSQL(ids)
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var raw []byte
			var seq int64
			if err := rows.Scan(&raw, &seq); err != nil {
				rows.Close()
				return nil, err
			}
			if len(raw) == 16 {
				seqs[uuid.UUID(raw)] = seq
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	sub := make([]spi.ClaimRef, len(pos))
	for k, i := range pos {
		sub[k] = refs[i]
	}
	fenced := sqlcore.Fenced(sub, seqs)
	out := make([]int, len(fenced))
	for k, f := range fenced {
		out[k] = pos[f]
	}
	return out, nil
}

// CompleteJobs applies a batch of fenced owner writes in one transaction:
// one SELECT ... FOR UPDATE locks the batch's RUNNING jobs and checks their
// claim sequences, then one PL/SQL block per 100 completions writes those
// that apply (one round trip each). The result has one entry per
// completion, true when it applied. When one claim appears more than once
// in the batch, only its first completion can apply. SUCCEEDED sets the
// finish time, result and result type; RETRY puts the job back to PENDING
// at RetryAt with the new attempt count and last error and the owner
// cleared; FAILED sets the attempt count, last error and finish time. The
// claim sequence does not change. An unknown outcome fails the whole batch
// before anything is written.
//
// A deadlock or a lost connection runs the transaction again. When the
// commit itself failed with its outcome unknown, the next run reports as
// applied the completions whose job already shows exactly what they wrote.
func (s *Store) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := sqlcore.ValidOutcomes(cs); err != nil {
		return nil, fail("complete jobs", err)
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	refs := sqlcore.Refs(cs)
	pos := sqlcore.FirstOfEach(refs)
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		clear(out)
		apply, err := current(ctx, tx, refs, pos)
		if err != nil {
			return err
		}
		for start := 0; start < len(apply); start += rowsPerComplet {
			chunk := apply[start:min(start+rowsPerComplet, len(apply))]
			batch := make([]spi.Completion, len(chunk))
			for k, i := range chunk {
				batch[k] = cs[i]
			}
			query, args := completeSQL(batch)
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
		for _, i := range apply {
			out[i] = true
		}
		// A completion found already applied (by an earlier run whose
		// commit failed, or an earlier call whose answer was lost) counts.
		return sqlcore.Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return loadJobs(ctx, tx, ids) })
	})
	if err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// loadJobs reads the jobs of ids (missing ones left out), in chunks.
func loadJobs(ctx context.Context, tx *sql.Tx, ids []uuid.UUID) ([]*spi.Job, error) {
	return sqlcore.InChunks(ids, idsPerList, func(chunk []uuid.UUID) ([]*spi.Job, error) {
		raw := make([][]byte, len(chunk))
		for k, id := range chunk {
			raw[k] = dbID(id)
		}
		query, args := jobsSQL(raw)
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		got, _, err := scanJobs(rows)
		return got, err
	})
}

// ReleaseJobs puts claimed jobs back to PENDING, due at now, with the owner
// cleared and the claim sequence advanced, without charging attempts or the
// crash budget: the batch's RUNNING jobs are locked and their claim
// sequences checked, and one UPDATE per 500 releases writes those that
// apply, in one transaction, run again on a retryable error.
func (s *Store) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	pos := sqlcore.FirstOfEach(refs)
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		clear(out)
		apply, err := current(ctx, tx, refs, pos)
		if err != nil {
			return err
		}
		for start := 0; start < len(apply); start += idsPerList {
			chunk := apply[start:min(start+idsPerList, len(apply))]
			ids := make([][]byte, len(chunk))
			for k, i := range chunk {
				ids[k] = dbID(refs[i].JobID)
			}
			query, args := releaseSQL(now, ids)
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
		for _, i := range apply {
			out[i] = true
		}
		return nil
	})
	if err != nil {
		return nil, fail("release jobs", err)
	}
	return out, nil
}
