package mysql

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
// that claim sequence: one statement per 1,000 refs, by primary key. It
// implements [spi.ClaimChecker].
func (s *Store) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	ids := sqlcore.DistinctIDs(refs)
	cur := make(map[uuid.UUID]int64, len(ids))
	for start := 0; start < len(ids); start += 1000 {
		chunk := ids[start:min(start+1000, len(ids))]
		rows, err := s.db.QueryContext(ctx, s.sql.lockedRunning+`(`+marks(len(chunk))+`)`, idArgs(chunk)...)
		if err != nil {
			return nil, fail("check claims", err)
		}
		for rows.Next() {
			var raw []byte
			var seq int64
			if err := rows.Scan(&raw, &seq); err != nil {
				rows.Close()
				return nil, fail("check claims", err)
			}
			if id, err := scanID(raw); err == nil {
				cur[id] = seq
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fail("check claims", err)
		}
	}
	for i, r := range refs {
		seq, ok := cur[r.JobID]
		out[i] = ok && seq == r.ClaimSeq
	}
	return out, nil
}

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (now >= its expiry) or already owner's (a renewal), with
// one atomic upsert, and reports whether owner holds it afterwards (read in
// the same transaction, under the upsert's row lock). Name, owner and a
// positive ttl are required. It implements [spi.LeaseStore].
func (s *Store) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("mysql: lease %q for %q: name, owner and a positive ttl are required", name, owner)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	var held bool
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.sql.acquireLease, []byte(name), []byte(owner), dbTime(now.Add(ttl)), dbTime(now)); err != nil {
			return err
		}
		var got []byte
		if err := tx.QueryRowContext(ctx, s.sql.leaseOwner, []byte(name)).Scan(&got); err != nil {
			return err
		}
		held = string(got) == owner
		return nil
	}, nil)
	if err != nil {
		return false, fail("acquire lease "+name, err)
	}
	return held, nil
}

// ReleaseLease frees the lease if owner holds it; otherwise it does
// nothing. It implements [spi.LeaseStore].
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.db.ExecContext(ctx, s.sql.releaseLease, []byte(name), []byte(owner)); err != nil {
		return fail("release lease "+name, err)
	}
	return nil
}

// writeState applies one state write in one transaction: it reads the
// job's status and claim sequence with a shared lock (the latest committed
// row; no claim, completion or recovery can change it until the write
// commits), checks the fence (when fence is not nil), and writes: an INSERT
// for an init (a duplicate key is a version conflict), a compare-and-set
// UPDATE on the version otherwise.
func (s *Store) writeState(ctx context.Context, w sqlcore.StateWrite) (spi.StateWriteResult, error) {
	jobID, ns, state, expected, init, fence := w.JobID, w.Namespace, w.State, w.Expected, w.Init, w.Fence
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	var res spi.StateWriteResult
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res = 0
		var status string
		var seq int64
		err := tx.QueryRowContext(ctx, s.sql.stateFence, binID(jobID)).Scan(&status, &seq)
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
		if init {
			_, err := tx.ExecContext(ctx, s.sql.insertState, binID(jobID), []byte(ns), state)
			switch {
			case errCode(err) == errDuplicateKey:
				res = spi.StateVersionConflict
				return nil
			case err != nil:
				return err
			}
			res = spi.StateUpdated
			return nil
		}
		r, err := tx.ExecContext(ctx, s.sql.updateState, state, binID(jobID), []byte(ns), expected)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		res = spi.StateVersionConflict
		if n == 1 {
			res = spi.StateUpdated
		}
		return nil
	}, nil)
	if err != nil {
		return 0, fail("write state of job "+jobID.String(), err)
	}
	return res, nil
}

// PutProperty sets the job's property key to value, write-once: writing
// the same value again is harmless, another value fails with an error
// wrapping spi.ErrPropertyExists. It wraps spi.ErrNotFound for an unknown
// job (the foreign key refuses the row). It implements
// [spi.JobPropertyStore].
func (s *Store) PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("mysql: property of job %s: empty key", jobID)
	}
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	_, err = s.db.ExecContext(ctx, s.sql.insertProperty, binID(jobID), []byte(key), []byte(value))
	switch errCode(err) {
	case 0:
		if err != nil {
			return fail("put property", err)
		}
		return nil
	case errNoReferencedRow:
		return fmt.Errorf("mysql: put property: %w: %s", spi.ErrNotFound, jobID)
	case errDuplicateKey:
		var k, old []byte
		err := s.db.QueryRowContext(ctx, s.sql.getProperty, []byte(key), binID(jobID)).Scan(&k, &old)
		if err != nil {
			return fail("put property", err)
		}
		if string(old) != value {
			return fmt.Errorf("mysql: put property: %w: job %s property %q", spi.ErrPropertyExists, jobID, key)
		}
		return nil
	}
	return fail("put property", err)
}

// propertiesByPrefixSQL reads the job's properties whose key starts with
// prefix, byte for byte (the PrefixSQL of sqlcore.PropertyReads).
func (s *Store) propertiesByPrefixSQL(jobID uuid.UUID, prefix string) (string, []any) {
	return s.sql.propertiesByPrefix, []any{int64(len(prefix)), []byte(prefix), binID(jobID)}
}

// findByPropertySQL reads the ids of the jobs with property key = value
// (the FindSQL of sqlcore.PropertyReads).
func (s *Store) findByPropertySQL(key, value string, limit int) (string, []any) {
	if limit > 0 {
		return s.sql.findByProperty, []any{[]byte(key), []byte(value), int64(limit)}
	}
	return s.sql.findAllBy, []any{[]byte(key), []byte(value)}
}
