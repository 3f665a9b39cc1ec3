package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// CheckClaims reports, for each ref, whether its job is still RUNNING with
// that claim sequence, with one statement. It implements
// [spi.ClaimChecker].
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
	type pair struct {
		ID  string `json:"i"`
		Seq int64  `json:"s"`
	}
	ps := make([]pair, len(refs))
	for i, r := range refs {
		ps[i] = pair{r.JobID.String(), r.ClaimSeq}
	}
	arg, err := json.Marshal(ps)
	if err != nil {
		return nil, fail("check claims", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT r.key FROM json_each(?) r
		JOIN scheduler_job j ON j.job_id = json_extract(r.value, '$.i')
		WHERE j.claim_seq = json_extract(r.value, '$.s') AND j.status = 'RUNNING'`, string(arg))
	if err != nil {
		return nil, fail("check claims", err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, fail("check claims", err)
		}
		out[i] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fail("check claims", err)
	}
	return out, nil
}

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (now >= its expiry) or already owner's (a renewal), with
// one atomic upsert, and reports whether owner holds it afterwards. Name,
// owner and a positive ttl are required. It implements [spi.LeaseStore].
func (s *Store) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("sqlite: lease %q for %q: name, owner and a positive ttl are required", name, owner)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	var got string
	err = s.db.QueryRowContext(ctx, `INSERT INTO scheduler_lease (name, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE scheduler_lease.owner = excluded.owner OR scheduler_lease.expires_at <= ?
		RETURNING owner`, name, owner, micros(now.Add(ttl)), micros(now)).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
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
	if _, err := s.db.ExecContext(ctx, `DELETE FROM scheduler_lease WHERE name = ? AND owner = ?`, name, owner); err != nil {
		return fail("release lease "+name, err)
	}
	return nil
}

// writeState applies one state write in one IMMEDIATE transaction: a single
// statement that writes only when the fence (a RUNNING job with claim
// sequence *fence, when fence is not nil) and the version hold, and, when
// it wrote nothing, a read that tells why: an unknown job, a superseded
// fence, or a version conflict.
func (s *Store) writeState(ctx context.Context, w sqlcore.StateWrite) (spi.StateWriteResult, error) {
	jobID, ns, state, expected, init, fence := w.JobID, w.Namespace, w.State, w.Expected, w.Init, w.Fence
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	id := jobID.String()
	var seq any
	if fence != nil {
		seq = *fence
	}
	var res spi.StateWriteResult
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var r sql.Result
		var err error
		if init {
			r, err = tx.ExecContext(ctx, `INSERT INTO scheduler_job_state (job_id, namespace, state_json, version)
				SELECT job_id, ?, ?, 0 FROM scheduler_job
				WHERE job_id = ? AND (?4 IS NULL OR (status = 'RUNNING' AND claim_seq = ?4))
				ON CONFLICT (job_id, namespace) DO NOTHING`, ns, state, id, seq)
		} else {
			r, err = tx.ExecContext(ctx, `UPDATE scheduler_job_state SET state_json = ?, version = version + 1
				WHERE job_id = ? AND namespace = ? AND version = ?
					AND EXISTS (SELECT 1 FROM scheduler_job j WHERE j.job_id = scheduler_job_state.job_id
						AND (?5 IS NULL OR (j.status = 'RUNNING' AND j.claim_seq = ?5)))`, state, id, ns, expected, seq)
		}
		if err != nil {
			return err
		}
		if ok, err := applied(r); err != nil || ok {
			res = spi.StateUpdated
			return err
		}
		var status string
		var claimSeq int64
		err = tx.QueryRowContext(ctx, `SELECT status, claim_seq FROM scheduler_job WHERE job_id = ?`, id).Scan(&status, &claimSeq)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		}
		if err != nil {
			return err
		}
		if fence != nil && (status != string(spi.StatusRunning) || claimSeq != *fence) {
			res = spi.StateSuperseded
		} else {
			res = spi.StateVersionConflict
		}
		return nil
	})
	if err != nil {
		return 0, fail("write state of job "+id, err)
	}
	return res, nil
}

// PutProperty sets the job's property key to value, write-once: writing
// the same value again is harmless, another value fails with an error
// wrapping spi.ErrPropertyExists. It wraps spi.ErrNotFound for an unknown
// job. It implements [spi.JobPropertyStore].
func (s *Store) PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("sqlite: property of job %s: empty key", jobID)
	}
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	id := jobID.String()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)
			SELECT job_id, ?, ? FROM scheduler_job WHERE job_id = ?
			ON CONFLICT (job_id, prop_key) DO NOTHING`, key, value, id)
		if err != nil {
			return err
		}
		if ok, err := applied(r); err != nil || ok {
			return err
		}
		var old sql.NullString
		err = tx.QueryRowContext(ctx, `SELECT p.prop_value FROM scheduler_job j
			LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id AND p.prop_key = ?
			WHERE j.job_id = ?`, key, id).Scan(&old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		case err != nil:
			return err
		case old.String != value:
			return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, jobID, key)
		}
		return nil
	})
	if err != nil {
		return fail("put property", err)
	}
	return nil
}

// parseTextID reads a stored id.
func parseTextID(raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, corrupt(raw, "job_id %q is not a UUID", raw)
	}
	return id, nil
}

// propertiesByPrefixSQL reads the job's properties whose key starts with
// prefix (the PrefixSQL of sqlcore.PropertyReads). The prefix is compared
// as bytes: a LIKE would be case-insensitive and treat % and _ as
// wildcards.
func propertiesByPrefixSQL(jobID uuid.UUID, prefix string) (string, []any) {
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
		LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id
			AND substr(CAST(p.prop_key AS BLOB), 1, length(CAST(?1 AS BLOB))) = CAST(?1 AS BLOB)
		WHERE j.job_id = ?2`, []any{prefix, jobID.String()}
}

// findByPropertySQL reads the ids of the jobs with property key = value
// (the FindSQL of sqlcore.PropertyReads).
func findByPropertySQL(key, value string, limit int) (string, []any) {
	n := int64(limit)
	if limit <= 0 {
		n = -1 // no limit
	}
	return `SELECT job_id FROM scheduler_job_property
		WHERE prop_key = ? AND prop_value = ? ORDER BY job_id LIMIT ?`, []any{key, value, n}
}

// getStateSQL reads a namespace's state LEFT JOINed to its job (the SQL of
// sqlcore.StateRead).
func getStateSQL(jobID uuid.UUID, ns string) (string, []any) {
	return `SELECT s.state_json, s.version FROM scheduler_job j
		LEFT JOIN scheduler_job_state s ON s.job_id = j.job_id AND s.namespace = ?
		WHERE j.job_id = ?`, []any{ns, jobID.String()}
}

// getPropertySQL reads a property LEFT JOINed to its job (the GetSQL of
// sqlcore.PropertyReads).
func getPropertySQL(jobID uuid.UUID, key string) (string, []any) {
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
		LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id AND p.prop_key = ?
		WHERE j.job_id = ?`, []any{key, jobID.String()}
}
