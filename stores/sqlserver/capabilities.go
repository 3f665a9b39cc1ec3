package sqlserver

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
// that claim sequence: one statement per 600 refs, joining a VALUES list
// with the jobs by primary key. It implements [spi.ClaimChecker].
func (s *Store) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	for start := 0; start < len(refs); start += refsPerCheck {
		end := min(start+refsPerCheck, len(refs))
		args := make([]any, 0, 3*(end-start))
		for i := start; i < end; i++ {
			args = append(args, int64(i), dbID(refs[i].JobID), refs[i].ClaimSeq)
		}
		err := s.withRetry(ctx, IsRetryable, func(int) error {
			rows, err := s.db.QueryContext(ctx, checkClaimsSQL(end-start), args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var i int64
				if err := rows.Scan(&i); err != nil {
					return err
				}
				if i >= 0 && int(i) < len(out) {
					out[i] = true
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fail("check claims", err)
		}
	}
	return out, nil
}

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (now >= its expiry) or already owner's (a renewal), in one
// transaction under a key-range lock, and reports whether owner holds it
// afterwards. Name, owner and a positive ttl are required. It implements
// [spi.LeaseStore].
func (s *Store) TryAcquireLease(ctx context.Context, leaseName, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if leaseName == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("sqlserver: lease %q for %q: name, owner and a positive ttl are required", leaseName, owner)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	var got []byte
	err = s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		got = nil
		err := tx.QueryRowContext(ctx, acquireLeaseSQL, name(leaseName), name(owner), dbTime(now.Add(ttl)), dbTime(now)).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return false, fail("acquire lease "+leaseName, err)
	}
	return string(got) == owner, nil
}

// ReleaseLease frees the lease if owner holds it; otherwise it does
// nothing. It implements [spi.LeaseStore].
func (s *Store) ReleaseLease(ctx context.Context, leaseName, owner string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	err = s.withRetry(ctx, IsRetryable, func(int) error {
		_, err := s.db.ExecContext(ctx, releaseLeaseSQL, name(leaseName), name(owner))
		return err
	})
	if err != nil {
		return fail("release lease "+leaseName, err)
	}
	return nil
}

// writeState applies one state write in one transaction: it reads the
// job's status and claim sequence under a shared row lock held to the
// commit (so the fence cannot change meanwhile), checks the fence (a
// RUNNING job with claim sequence *fence, when fence is not nil), and
// writes only when the version holds. A concurrent init that wins the
// race makes this one a version conflict.
func (s *Store) writeState(ctx context.Context, w sqlcore.StateWrite) (spi.StateWriteResult, error) {
	jobID, ns, state, expected, init, fence := w.JobID, w.Namespace, w.State, w.Expected, w.Init, w.Fence
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
		err := tx.QueryRowContext(ctx, jobFenceSQL, id).Scan(&status, &seq)
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
		var r sql.Result
		if init {
			r, err = tx.ExecContext(ctx, initStateSQL, id, name(ns), state)
			if isDuplicateKey(err, "") {
				res = spi.StateVersionConflict
				return nil
			}
		} else {
			r, err = tx.ExecContext(ctx, updateStateSQL, id, name(ns), state, expected)
		}
		if err != nil {
			return err
		}
		ok, err := applied(r)
		if err != nil {
			return err
		}
		res = spi.StateVersionConflict
		if ok {
			res = spi.StateUpdated
		}
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
// job. It implements [spi.JobPropertyStore].
func (s *Store) PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("sqlserver: property of job %s: empty key", jobID)
	}
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	id := dbID(jobID)
	err = s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		r, err := tx.ExecContext(ctx, putPropertySQL, id, name(key), name(value))
		if err != nil {
			return err
		}
		if ok, err := applied(r); err != nil || ok {
			return err
		}
		var k, old []byte
		err = tx.QueryRowContext(ctx, getPropertySQL, id, name(key)).Scan(&k, &old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		case err != nil:
			return err
		case string(old) != value:
			return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, jobID, key)
		}
		return nil
	})
	if err != nil {
		return fail("put property", err)
	}
	return nil
}
