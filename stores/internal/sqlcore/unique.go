package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Unique keys live in {unique} (scheduler_job_unique): one row per key,
// with the job that holds it. The row's foreign key deletes it with its
// job (a delete, a purge, an archive move), so a key outlives no holder.
// An insert of unique jobs decides each key, in key order, in its own
// transaction:
//
//  1. it makes sure the key's row exists (Syntax.UniqueReserve: an insert
//     that does nothing when the row is there, and waits for an insert of
//     the same key in flight to commit or roll back);
//  2. it locks the row and reads its holder: from then on, an insert of the
//     same key waits for this transaction to end;
//  3. it reads the holder's status in a statement of its own, with the
//     fence's lock (Syntax.FenceHint, FenceOn), so that it sees what the
//     holder's insert committed (MySQL's repeatable read would otherwise
//     see its own snapshot);
//  4. a holder in one of the job's unique states, within the window the
//     row's until_time ends (a debounce's), makes the job a duplicate
//     (and, with spi.Unique.Replace, gives the holder its payload);
//     otherwise, once the job is written, the row names it, with its
//     window's end.
//
// The database, not a read, decides: two inserts of a key at once take
// turns at step 2, and the second sees the first's job.

// admitUnique decides the unique keys of jobs (spi.UniqueOrder) through q,
// inside the insert's transaction. It returns the holder of each job that
// is a duplicate, by index, the later jobs of a key in the batch included.
func (d Dialect[T]) admitUnique(ctx context.Context, q DBTX, jobs []*spi.Job) (map[int]uuid.UUID, error) {
	first, dupOf := spi.UniqueOrder(jobs)
	if len(first) == 0 {
		return nil, nil
	}
	s := &d.Syntax
	out := map[int]uuid.UUID{}
	for _, i := range first {
		j := jobs[i]
		h, until, err := d.uniqueHolder(ctx, q, j.Unique.Key, true)
		if err != nil {
			return nil, err
		}
		if h == uuid.Nil || h == j.ID {
			continue
		}
		query, args := s.SQL("SELECT status FROM {job}"+s.FenceHint+" WHERE job_id = ?"+s.FenceOn, s.id(h))
		var status string
		switch err := q.QueryRowContext(ctx, query, args...).Scan(&status); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("read the holder %s of unique key %q: %w", h, j.Unique.Key, err)
		case j.Unique.Holds(j, spi.Status(status), until):
			out[i] = h
			if j.Unique.Replace {
				query, args := s.SQL("UPDATE {job} SET payload = ? WHERE job_id = ? AND status = 'PENDING'", s.blob(j.Payload), s.id(h))
				if _, err := q.ExecContext(ctx, query, args...); err != nil {
					return nil, fmt.Errorf("replace the payload of %s, holder of key %q: %w", h, j.Unique.Key, err)
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

// uniqueHolder reads the job that holds key (the zero id for none) and
// the end of its window (zero for none). With lock, it first makes sure
// the key's row exists, and locks it.
func (d Dialect[T]) uniqueHolder(ctx context.Context, q DBTX, key string, lock bool) (uuid.UUID, time.Time, error) {
	s := &d.Syntax
	read := "SELECT job_id, until_time FROM {unique} WHERE unique_key = ?"
	if lock {
		reserve := s.UniqueReserve
		if reserve == "" {
			reserve = "INSERT INTO {unique} (unique_key) VALUES (?) ON CONFLICT (unique_key) DO NOTHING"
		}
		query, args := s.SQL(reserve, s.name(key))
		if _, err := q.ExecContext(ctx, query, args...); err != nil && (d.IsDuplicate == nil || !d.IsDuplicate(err)) {
			return uuid.Nil, time.Time{}, fmt.Errorf("reserve unique key %q: %w", key, err)
		}
		read = "SELECT job_id, until_time FROM {unique}" + s.LockHint + " WHERE unique_key = ?" + s.LockOn
	}
	query, args := s.SQL(read, s.name(key))
	var raw sql.Null[T]
	var rawUntil any
	switch err := q.QueryRowContext(ctx, query, args...).Scan(&raw, &rawUntil); {
	case errors.Is(err, sql.ErrNoRows):
		return uuid.Nil, time.Time{}, nil
	case err != nil:
		return uuid.Nil, time.Time{}, fmt.Errorf("read unique key %q: %w", key, err)
	case !raw.Valid:
		return uuid.Nil, time.Time{}, nil
	}
	until, err := d.timeOf(rawUntil)
	if err != nil {
		return uuid.Nil, time.Time{}, fmt.Errorf("unique key %q: the window's end: %w", key, err)
	}
	id, err := d.ParseID(raw.V)
	return id, until, err
}

// holdUnique makes the written jobs the holders of their unique keys, in
// the insert's transaction (step 4).
func (d Dialect[T]) holdUnique(ctx context.Context, q DBTX, written []*spi.Job) error {
	s := &d.Syntax
	for _, j := range written {
		if j.Unique == nil {
			continue
		}
		query, args := s.SQL("UPDATE {unique} SET job_id = ?, until_time = ? WHERE unique_key = ?", s.id(j.ID), s.time(j.Unique.Until), s.name(j.Unique.Key))
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("hold unique key %q: %w", j.Unique.Key, err)
		}
	}
	return nil
}

// UniqueHolder implements [spi.UniqueStore].
func (c Core[T]) UniqueHolder(ctx context.Context, key string) (uuid.UUID, error) {
	var h uuid.UUID
	err := c.do("read unique key", func() (err error) {
		h, _, err = c.cfg.D.uniqueHolder(ctx, c.cfg.DB, key, false)
		return err
	})
	return h, err
}

// SequenceTail implements [spi.SequenceStore]: a sequence's tail lives in
// the row of its key in {unique} (sequence.go).
func (c Core[T]) SequenceTail(ctx context.Context, key string) (uuid.UUID, error) {
	return c.UniqueHolder(ctx, key)
}
