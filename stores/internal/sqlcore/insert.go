package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// SQLTx returns the application's transaction given to a database/sql
// store's InsertJobsTx, or an error naming the type it got; store names
// the store in it ("the MySQL store").
func SQLTx(txAny any, store string) (*sql.Tx, error) {
	tx, ok := txAny.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("transaction of type %T, %s needs a *sql.Tx", txAny, store)
	}
	if tx == nil {
		return nil, errors.New("nil transaction")
	}
	return tx, nil
}

// Dedupe resolves the idempotency keys of an insert batch: existing holds
// the ids of the keys already stored (and is updated with the batch's own).
// A job whose key exists, in the database or earlier in the batch, is not
// written: its result carries the existing id and Duplicate. It returns
// one result per job and the jobs to write.
func Dedupe(jobs []*spi.Job, existing map[string]uuid.UUID) (res []spi.InsertResult, fresh []*spi.Job) {
	res = make([]spi.InsertResult, len(jobs))
	fresh = make([]*spi.Job, 0, len(jobs))
	for i, j := range jobs {
		if k := j.IdempotencyKey; k != "" {
			if id, ok := existing[k]; ok {
				res[i] = spi.InsertResult{ID: id, Duplicate: true}
				continue
			}
			existing[k] = j.ID
		}
		res[i] = spi.InsertResult{ID: j.ID}
		fresh = append(fresh, j)
	}
	return res, fresh
}

// JobTag is one tag of one job, as InsertTagsSQL writes it.
type JobTag struct {
	ID  uuid.UUID
	Tag string
}

// JobProp is one property of one job, as InsertPropsSQL writes it.
type JobProp struct {
	ID         uuid.UUID
	Key, Value string
}

// Insert writes a valid, non-empty batch through q: it reads which
// idempotency keys exist (ExistingKeysSQL), resolves them (Dedupe), and
// inserts the new jobs and their tags (each tag of a job once) in
// statements of at most the InsertSizes of its Database. With
// recheck (the run after a COMMIT whose outcome is unknown), the jobs of
// the batch that exist already are the ones that COMMIT wrote: they are
// reported inserted, and not written again.
func (d Dialect[T]) Insert(ctx context.Context, q DBTX, jobs []*spi.Job, recheck bool) ([]spi.InsertResult, error) {
	written := map[uuid.UUID]bool{}
	if recheck {
		ids := make([]uuid.UUID, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		got, err := d.LoadJobs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		for _, j := range got {
			written[j.ID] = true
		}
	}
	var keys []string
	for _, j := range jobs {
		if k := j.IdempotencyKey; k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	existing := make(map[string]uuid.UUID, len(keys))
	if _, err := InChunks(keys, d.chunk(), func(keys []string) ([]struct{}, error) {
		query, args := d.ExistingKeysSQL(keys)
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var raw T
			if err := rows.Scan(&k, &raw); err != nil {
				return nil, err
			}
			if existing[k], err = d.ParseID(raw); err != nil {
				return nil, err
			}
		}
		return nil, rows.Err()
	}); err != nil {
		return nil, err
	}
	res, fresh := Dedupe(jobs, existing)
	dups, err := d.admitUnique(ctx, q, jobs)
	if err != nil {
		return nil, err
	}
	if len(dups) > 0 {
		dupIDs := make(map[uuid.UUID]bool, len(dups))
		for i, h := range dups {
			res[i] = spi.InsertResult{ID: h, Duplicate: true}
			dupIDs[jobs[i].ID] = true
		}
		fresh = slices.DeleteFunc(fresh, func(j *spi.Job) bool { return dupIDs[j.ID] })
	}
	if len(written) > 0 {
		for i, j := range jobs {
			if written[j.ID] {
				res[i] = spi.InsertResult{ID: j.ID} // a duplicate of itself: the lost COMMIT wrote it
			}
		}
		fresh = slices.DeleteFunc(fresh, func(j *spi.Job) bool { return written[j.ID] })
	}
	var tags []JobTag
	var props []JobProp
	for _, j := range fresh {
		for _, t := range UniqueTags(j.Tags) {
			tags = append(tags, JobTag{j.ID, t})
		}
		for _, k := range SortedKeys(j.Properties) {
			props = append(props, JobProp{j.ID, k, j.Properties[k]})
		}
	}
	rowsPer, tagsPer := d.InsertSizes()
	for start := 0; start < len(fresh); {
		end, size := start+1, 0
		if d.RowBytes != nil {
			size = d.RowBytes(fresh[start])
		}
		for end < len(fresh) && end-start < max(rowsPer, 1) {
			if d.RowBytes != nil {
				if size += d.RowBytes(fresh[end]); size > d.InsertBudget() {
					break
				}
			}
			end++
		}
		query, args, err := d.InsertJobsSQL(fresh[start:end])
		if err == nil {
			_, err = q.ExecContext(ctx, query, args...)
		}
		if err != nil && d.IsDuplicate != nil && d.IsDuplicate(err) {
			return nil, fmt.Errorf("a job of the batch already exists: %w", err)
		}
		if err != nil {
			return nil, err
		}
		start = end
	}
	if d.AfterInsert != nil {
		if err := d.AfterInsert(ctx, q, fresh); err != nil {
			return nil, err
		}
	}
	if err := d.holdUnique(ctx, q, fresh); err != nil {
		return nil, err
	}
	if _, err := InChunks(tags, max(tagsPer, 1), func(chunk []JobTag) ([]struct{}, error) {
		query, args := d.InsertTagsSQL(chunk)
		_, err := q.ExecContext(ctx, query, args...)
		return nil, err
	}); err != nil {
		return nil, err
	}
	if _, err := InChunks(props, max(tagsPer*2/3, 1), func(chunk []JobProp) ([]struct{}, error) {
		query, args := d.InsertPropsSQL(chunk)
		_, err := q.ExecContext(ctx, query, args...)
		return nil, err
	}); err != nil {
		return nil, err
	}
	if FlowBatch(fresh) {
		if err := d.link(ctx, q, fresh); err != nil {
			return nil, err
		}
	}
	if SignalBatch(fresh) {
		if err := d.await(ctx, q, fresh); err != nil {
			return nil, err
		}
	}
	if err := d.LinkSequences(ctx, SQLRowTx(q), fresh); err != nil {
		return nil, err
	}
	return res, nil
}

// SortedKeys returns m's keys in order; nil for an empty map, without
// allocating (the insert path of every job).
func SortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

// UniqueTags returns tags without repeats, in the order given.
func UniqueTags(tags []string) []string {
	if len(tags) < 2 {
		return tags
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
