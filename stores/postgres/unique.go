package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.UniqueStore = (*Store)(nil)

// uniqueStatements builds the statements of unique keys (migration 18,
// scheduler_job_unique), whose protocol is sqlcore's (its unique.go):
// reserve and lock the key's row, read the holder's status in a statement
// of its own, write the job and name it as the holder.
func (s *statements) uniqueStatements(r *strings.Replacer) {
	// One statement makes sure the row exists and locks it: ON CONFLICT
	// DO UPDATE waits for an insert of the key in flight and then locks
	// the row's latest version, whose holder it returns (NULL for a row
	// it made). Under REPEATABLE READ, a row committed after the
	// snapshot fails the transaction with a serialization error instead.
	s.uniqueReserve = r.Replace(`INSERT INTO {unique} AS u (unique_key) VALUES ($1)
		ON CONFLICT (unique_key) DO UPDATE SET unique_key = EXCLUDED.unique_key
		RETURNING job_id, until_time`)
	// A statement of its own, so that READ COMMITTED reads the holder's
	// row as committed now (the row lock above waited for its insert).
	s.uniqueStatus = r.Replace(`SELECT status FROM {job} WHERE job_id = $1`)
	s.uniqueHold = r.Replace(`UPDATE {unique} SET job_id = $1, until_time = $3 WHERE unique_key = $2`)
	// A debounce's duplicate with the last arguments (spi.Unique.Replace).
	s.uniqueReplace = r.Replace(`UPDATE {job} SET payload = $2 WHERE job_id = $1 AND status = 'PENDING'`)
	s.uniqueHolder = r.Replace(`SELECT job_id FROM {unique} WHERE unique_key = $1`)
}

// admitUnique decides the unique keys of jobs (spi.UniqueOrder) through q,
// a transaction, and returns the holder of each job that is a duplicate,
// by index, the later jobs of a key in the batch included.
func (s *Store) admitUnique(ctx context.Context, q dbtx, jobs []*spi.Job) (map[int]uuid.UUID, error) {
	first, dupOf := spi.UniqueOrder(jobs)
	if len(first) == 0 {
		return nil, nil
	}
	out := map[int]uuid.UUID{}
	for _, i := range first {
		j := jobs[i]
		var h pgtype.UUID
		var until pgtype.Timestamptz
		if err := q.QueryRow(ctx, s.sql.uniqueReserve, j.Unique.Key).Scan(&h, &until); err != nil {
			return nil, fmt.Errorf("reserve unique key %q: %w", j.Unique.Key, err)
		}
		if !h.Valid || uuid.UUID(h.Bytes) == j.ID {
			continue
		}
		var status string
		switch err := q.QueryRow(ctx, s.sql.uniqueStatus, h).Scan(&status); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("read the holder %s of unique key %q: %w", uuid.UUID(h.Bytes), j.Unique.Key, err)
		case j.Unique.Holds(j, spi.Status(status), until.Time):
			out[i] = uuid.UUID(h.Bytes)
			if j.Unique.Replace {
				if _, err := q.Exec(ctx, s.sql.uniqueReplace, h, j.Payload); err != nil {
					return nil, fmt.Errorf("replace the payload of %s, holder of key %q: %w", uuid.UUID(h.Bytes), j.Unique.Key, err)
				}
			}
		}
	}
	for i, f := range dupOf {
		if h, ok := out[f]; ok {
			out[i] = h
		} else {
			out[i] = jobs[f].ID
		}
	}
	return out, nil
}

// holdUnique names the jobs at idx of jobs, just written, as the holders
// of their unique keys.
func (s *Store) holdUnique(ctx context.Context, q dbtx, jobs []*spi.Job, idx []int) error {
	for _, i := range idx {
		j := jobs[i]
		if j.Unique == nil {
			continue
		}
		until := pgtype.Timestamptz{Time: j.Unique.Until, Valid: !j.Unique.Until.IsZero()}
		if _, err := q.Exec(ctx, s.sql.uniqueHold, pgUUID(j.ID), j.Unique.Key, until); err != nil {
			return fmt.Errorf("hold unique key %q: %w", j.Unique.Key, err)
		}
	}
	return nil
}

// UniqueHolder implements spi.UniqueStore.
func (s *Store) UniqueHolder(ctx context.Context, key string) (uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return uuid.Nil, err
	}
	defer done()
	var h pgtype.UUID
	switch err := s.pool.QueryRow(ctx, s.sql.uniqueHolder, key).Scan(&h); {
	case errors.Is(err, pgx.ErrNoRows):
		return uuid.Nil, nil
	case err != nil:
		return uuid.Nil, fail("read unique key", err)
	case !h.Valid:
		return uuid.Nil, nil
	}
	return uuid.UUID(h.Bytes), nil
}

var _ spi.RateLimitStore = (*Store)(nil)

// RateStarts implements spi.RateLimitStore (the claim of rate-limited jobs
// is the core's: see ClaimJobs).
func (s *Store) RateStarts(ctx context.Context, resources []string) ([]spi.RateWindow, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	return s.core.RateStarts(ctx, resources)
}
