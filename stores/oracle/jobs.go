package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// idempotencyIndex is the unique index of the idempotency keys; a
// concurrent insert of the same new key fails on it (ORA-00001) once the
// other commits, and the insert then runs again and finds the key.
const idempotencyIndex = "UQ_SCHEDULER_JOB_IDEMPOTENCY_KEY"

// insertRetryable is IsRetryable plus a clash on the idempotency index.
func insertRetryable(err error) bool {
	return IsRetryable(err) || isUniqueViolation(err, idempotencyIndex)
}

// validateJobs refuses a batch with an invalid job, naming it: what
// spi.ValidateJobs refuses, and an empty tag, which Oracle cannot store (it
// reads the empty string as NULL).
func validateJobs(jobs []*spi.Job) error {
	if err := spi.ValidateJobs(jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		if slices.Contains(j.Tags, "") {
			return fmt.Errorf("job %s has an empty tag, which Oracle cannot store (it reads '' as NULL)", j.ID)
		}
	}
	return nil
}

// insertBatch is insertJobs in a transaction: the Insert of the shared
// InsertJobs and InsertJobsTx (sqlcore.TxInserts).
func insertBatch(ctx context.Context, tx *sql.Tx, jobs []*spi.Job) ([]spi.InsertResult, error) {
	return insertJobs(ctx, tx, jobs)
}

// insertJobs resolves idempotency keys, then inserts the new jobs and their
// tags with multi-row statements, and writes EMPTY_BLOB() for the empty
// payloads and results.
func insertJobs(ctx context.Context, q querier, jobs []*spi.Job) ([]spi.InsertResult, error) {
	existing, err := existingKeys(ctx, q, jobs)
	if err != nil {
		return nil, err
	}
	res, fresh := sqlcore.Dedupe(jobs, existing)
	var emptyPayload, emptyResult [][]byte
	for start := 0; start < len(fresh); start += rowsPerInsert {
		chunk := fresh[start:min(start+rowsPerInsert, len(fresh))]
		query, args, err := insertJobsSQL(chunk)
		if err != nil {
			return nil, err
		}
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return nil, err
		}
		for _, j := range chunk {
			if isEmptyBlob(j.Payload) {
				emptyPayload = append(emptyPayload, dbID(j.ID))
			}
			if isEmptyBlob(j.Result) {
				emptyResult = append(emptyResult, dbID(j.ID))
			}
		}
	}
	for _, e := range []struct {
		column string
		ids    [][]byte
	}{{"payload", emptyPayload}, {"job_result", emptyResult}} {
		column, ids := e.column, e.ids
		for start := 0; start < len(ids); start += idsPerList {
			query, args := emptyBlobsSQL(column, ids[start:min(start+idsPerList, len(ids))])
			if _, err := q.ExecContext(ctx, query, args...); err != nil {
				return nil, err
			}
		}
	}
	pairs := tagPairs(fresh)
	for start := 0; start < len(pairs); start += 2 * tagsPerInsert {
		query, args := insertTagsSQL(pairs[start:min(start+2*tagsPerInsert, len(pairs))])
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// tagPairs returns the (job id, tag) binds of the jobs' tags, each tag of
// a job once.
func tagPairs(jobs []*spi.Job) []any {
	var out []any
	for _, j := range jobs {
		var seen []string
		for _, t := range j.Tags {
			if slices.Contains(seen, t) {
				continue
			}
			seen = append(seen, t)
			out = append(out, dbID(j.ID), t)
		}
	}
	return out
}

// existingKeys maps the batch's idempotency keys that are already stored to
// their jobs' ids.
func existingKeys(ctx context.Context, q querier, jobs []*spi.Job) (map[string]uuid.UUID, error) {
	var keys []any
	var seen []string
	for _, j := range jobs {
		if k := j.IdempotencyKey; k != "" && !slices.Contains(seen, k) {
			seen = append(seen, k)
			keys = append(keys, k)
		}
	}
	found := make(map[string]uuid.UUID, len(keys))
	for start := 0; start < len(keys); start += idsPerList {
		query, args := existingKeysSQL(keys[start:min(start+idsPerList, len(keys))])
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k string
			var raw []byte
			if err := rows.Scan(&k, &raw); err != nil {
				rows.Close()
				return nil, err
			}
			id, err := parseID(raw)
			if err != nil {
				rows.Close()
				return nil, err
			}
			found[k] = id
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}
