package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// CheckClaims reports, for each ref, whether its job is still RUNNING with
// that claim sequence, with one statement that finds the jobs by primary
// key. It implements [spi.ClaimChecker].
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
	ids := make([]pgtype.UUID, len(refs))
	seqs := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = pgUUID(r.JobID)
		seqs[i] = r.ClaimSeq
	}
	rows, err := s.pool.Query(ctx, s.sql.checkClaims, ids, seqs)
	if err != nil {
		return nil, fail("check claims", err)
	}
	var idx int64
	_, err = pgx.ForEachRow(rows, []any{&idx}, func() error {
		out[idx-1] = true
		return nil
	})
	if err != nil {
		return nil, fail("check claims", err)
	}
	return out, nil
}

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (now >= its expiry) or already owner's (a renewal), and
// reports whether owner holds it afterwards. It is one atomic upsert: INSERT
// ... ON CONFLICT DO UPDATE ... WHERE the lease is owner's or expired, which
// PostgreSQL evaluates on the latest version of a lease row it had to wait
// for, so two nodes never both acquire. Name, owner and a positive ttl are
// required. It implements [spi.LeaseStore].
func (s *Store) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("postgres: lease %q for %q: name, owner and a positive ttl are required", name, owner)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	var got string
	err = s.pool.QueryRow(ctx, s.sql.acquireLease, name, owner, now.Add(ttl), now).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fail("acquire lease "+name, err)
	}
	return got == owner, nil
}

// ReleaseLease frees the lease if owner holds it; otherwise it does
// nothing. It implements [spi.LeaseStore].
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.pool.Exec(ctx, s.sql.releaseLease, name, owner); err != nil {
		return fail("release lease "+name, err)
	}
	return nil
}

// GetState returns the state of the job's namespace, byte for byte, and
// whether it exists. It wraps spi.ErrNotFound for an unknown job. It
// implements [spi.JobStateStore].
func (s *Store) GetState(ctx context.Context, jobID uuid.UUID, namespace string) (spi.VersionedState, bool, error) {
	done, err := s.enter()
	if err != nil {
		return spi.VersionedState{}, false, err
	}
	defer done()
	var state []byte
	var version *int64
	err = s.pool.QueryRow(ctx, s.sql.getState, pgUUID(jobID), namespace).Scan(&state, &version)
	if errors.Is(err, pgx.ErrNoRows) {
		return spi.VersionedState{}, false, fmt.Errorf("postgres: get state: %w: %s", spi.ErrNotFound, jobID)
	}
	if err != nil {
		return spi.VersionedState{}, false, fail("get state of job "+jobID.String(), err)
	}
	if version == nil {
		return spi.VersionedState{}, false, nil
	}
	if len(state) == 0 {
		state = nil
	}
	return spi.VersionedState{JSON: state, Version: *version}, true, nil
}

// writeState runs one state write: a statement that locks the job row FOR
// SHARE, writes only when the fence (a RUNNING job with claim sequence
// *fence, when fence is not nil) and the version hold, and tells which
// condition failed.
func (s *Store) writeState(ctx context.Context, w sqlcore.StateWrite) (spi.StateWriteResult, error) {
	jobID, ns, state, expected, init, fence := w.JobID, w.Namespace, w.State, w.Expected, w.Init, w.Fence
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	var found, owned, wrote bool
	if init {
		err = s.pool.QueryRow(ctx, s.sql.initState, pgUUID(jobID), ns, state, fence).Scan(&found, &owned, &wrote)
	} else {
		err = s.pool.QueryRow(ctx, s.sql.updateState, pgUUID(jobID), ns, state, expected, fence).Scan(&found, &owned, &wrote)
	}
	switch {
	case err != nil:
		return 0, fail("write state of job "+jobID.String(), err)
	case !found:
		return 0, fmt.Errorf("postgres: write state: %w: %s", spi.ErrNotFound, jobID)
	case !owned:
		return spi.StateSuperseded, nil
	case wrote:
		return spi.StateUpdated, nil
	}
	return spi.StateVersionConflict, nil
}

// PutProperty sets the job's property key to value, write-once: writing
// the same value again is harmless, another value fails with an error
// wrapping spi.ErrPropertyExists. It wraps spi.ErrNotFound for an unknown
// job. One statement, unless a concurrent writer of the same key got there
// first. It implements [spi.JobPropertyStore].
func (s *Store) PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("postgres: property of job %s: empty key", jobID)
	}
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	var inserted, found bool
	var old *string
	if err := s.pool.QueryRow(ctx, s.sql.putProperty, pgUUID(jobID), key, value).Scan(&inserted, &found, &old); err != nil {
		return fail("put property", err)
	}
	if !inserted && found && old == nil {
		// The conflicting row was committed while the insert waited for
		// it: read it in a snapshot of its own.
		var v pgtype.Text
		if err := s.pool.QueryRow(ctx, s.sql.getProperty, pgUUID(jobID), key).Scan(&v); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fail("put property", err)
		}
		if v.Valid {
			old = &v.String
		}
	}
	switch {
	case inserted:
		return nil
	case !found:
		return fmt.Errorf("postgres: put property: %w: %s", spi.ErrNotFound, jobID)
	case old == nil || *old != value:
		return fmt.Errorf("postgres: put property: %w: job %s property %q", spi.ErrPropertyExists, jobID, key)
	}
	return nil
}

// GetProperty returns the job's property key and whether it is set. It
// wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobPropertyStore].
func (s *Store) GetProperty(ctx context.Context, jobID uuid.UUID, key string) (string, bool, error) {
	done, err := s.enter()
	if err != nil {
		return "", false, err
	}
	defer done()
	var v pgtype.Text
	err = s.pool.QueryRow(ctx, s.sql.getProperty, pgUUID(jobID), key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, fmt.Errorf("postgres: get property: %w: %s", spi.ErrNotFound, jobID)
	}
	if err != nil {
		return "", false, fail("get property", err)
	}
	return v.String, v.Valid, nil
}

// GetPropertiesByPrefix returns the job's properties whose key starts with
// prefix, byte for byte ("" for all; no character of the prefix is a
// wildcard). It wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobPropertyStore].
func (s *Store) GetPropertiesByPrefix(ctx context.Context, jobID uuid.UUID, prefix string) (map[string]string, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := s.pool.Query(ctx, s.sql.propertiesByPrefix, pgUUID(jobID), prefix)
	if err != nil {
		return nil, fail("get properties", err)
	}
	found := false
	out := map[string]string{}
	var k, v pgtype.Text
	_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		found = true
		if k.Valid {
			out[k.String] = v.String
		}
		return nil
	})
	if err != nil {
		return nil, fail("get properties", err)
	}
	if !found {
		return nil, fmt.Errorf("postgres: get properties: %w: %s", spi.ErrNotFound, jobID)
	}
	return out, nil
}

// FindJobsByProperty returns up to limit ids (all when limit <= 0), in
// ascending order, of the jobs whose property key equals value, from the
// index on (prop_key, prop_value, job_id). It implements
// [spi.JobPropertyStore].
func (s *Store) FindJobsByProperty(ctx context.Context, key, value string, limit int) ([]uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	var n *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		n = &l
	}
	rows, err := s.pool.Query(ctx, s.sql.findByProperty, key, value, n)
	if err != nil {
		return nil, fail("find jobs by property", err)
	}
	var out []uuid.UUID
	var id pgtype.UUID
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		out = append(out, id.Bytes)
		return nil
	})
	if err != nil {
		return nil, fail("find jobs by property", err)
	}
	return out, nil
}
