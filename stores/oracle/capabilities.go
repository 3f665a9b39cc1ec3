package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// CheckClaims reports, for each ref, whether its job is still RUNNING with
// that claim sequence: one statement per 500 refs reads the claim
// sequences of the RUNNING jobs among them by primary key. It implements
// [spi.ClaimChecker].
func (s *Store) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	seqs := map[uuid.UUID]int64{}
	for start := 0; start < len(refs); start += idsPerList {
		end := min(start+idsPerList, len(refs))
		ids := make([][]byte, 0, end-start)
		for _, r := range refs[start:end] {
			ids = append(ids, dbID(r.JobID))
		}
		err := s.withRetry(ctx, IsRetryable, func(int) error {
			query, args := checkClaimsSQL(ids)
			rows, err := s.db.QueryContext(ctx, query, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var raw []byte
				var seq int64
				if err := rows.Scan(&raw, &seq); err != nil {
					return err
				}
				if len(raw) == 16 {
					seqs[uuid.UUID(raw)] = seq
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fail("check claims", err)
		}
	}
	for i, r := range refs {
		seq, ok := seqs[r.JobID]
		out[i] = ok && seq == r.ClaimSeq
	}
	return out, nil
}

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (now >= its expiry) or already owner's (a renewal), with one
// MERGE in a transaction that then reads the owner, and reports whether
// owner holds it afterwards. Name, owner and a positive ttl are required.
// It implements [spi.LeaseStore].
func (s *Store) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("oracle: lease %q for %q: name, owner and a positive ttl are required", name, owner)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	var got sql.NullString
	err = s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		got = sql.NullString{}
		query, args := acquireLeaseSQL(name, owner, now.Add(ttl), now)
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return err
		}
		query, args = leaseOwnerSQL(name)
		err := tx.QueryRowContext(ctx, query, args...).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return false, fail("acquire lease "+name, err)
	}
	return got.String == owner, nil
}

// ReleaseLease frees the lease if owner holds it; otherwise it does
// nothing. It implements [spi.LeaseStore].
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		query, args := releaseLeaseSQL(name, owner)
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return fail("release lease "+name, err)
	}
	return nil
}

// writeState applies one state write in one transaction: it locks the
// job's row (FOR UPDATE: the fence cannot change, and the job's state
// writes take turns), checks the fence (a RUNNING job with claim sequence
// *fence, when fence is not nil), and writes only when the version holds.
// An empty namespace cannot be stored (Oracle reads ” as NULL).
func (s *Store) writeState(ctx context.Context, w sqlcore.StateWrite) (spi.StateWriteResult, error) {
	jobID, ns, state, expected, init, fence := w.JobID, w.Namespace, w.State, w.Expected, w.Init, w.Fence
	if ns == "" {
		return 0, fmt.Errorf("oracle: write state of job %s: empty namespace, which Oracle cannot store", jobID)
	}
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	id := dbID(jobID)
	var res spi.StateWriteResult
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		var status string
		var seq int64
		query, args := jobFenceSQL(id)
		err := tx.QueryRowContext(ctx, query, args...).Scan(&status, &seq)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		}
		if err != nil {
			return err
		}
		if fence != nil && (status != string(spi.StatusRunning) || seq != *fence) {
			res = spi.StateSuperseded
			return nil
		}
		res = spi.StateVersionConflict
		if init {
			var v int64
			query, args = stateVersionSQL(id, ns)
			err := tx.QueryRowContext(ctx, query, args...).Scan(&v)
			if err == nil {
				return nil // the state exists
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			query, args = initStateSQL(id, ns, state)
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
			res = spi.StateUpdated
			return nil
		}
		query, args = updateStateSQL(id, ns, state, expected)
		r, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if ok, err := applied(r); err != nil || !ok {
			return err
		}
		res = spi.StateUpdated
		return nil
	})
	if err != nil {
		return 0, fail("write state of job "+jobID.String(), err)
	}
	return res, nil
}

// PutProperty sets the job's property key to value, write-once: writing
// the same value again is harmless, another value fails with an error
// wrapping spi.ErrPropertyExists. It wraps spi.ErrNotFound for an unknown
// job. An empty value is stored as NULL and read back as "". It implements
// [spi.JobPropertyStore].
func (s *Store) PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("oracle: property of job %s: empty key", jobID)
	}
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	id := dbID(jobID)
	err = s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		var k, old sql.NullString
		query, args := getPropertySQL(id, key)
		err := tx.QueryRowContext(ctx, query, args...).Scan(&k, &old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		case err != nil:
			return err
		case k.Valid && old.String != value:
			return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, jobID, key)
		case k.Valid:
			return nil
		}
		query, args = putPropertySQL(id, key, value)
		_, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return fail("put property", err)
	}
	return nil
}
