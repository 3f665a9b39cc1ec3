package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// idempotencyIndex is the unique index of the idempotency keys; a
// concurrent insert of the same new key can still fail on it, and the
// insert then runs again and finds the key.
const idempotencyIndex = "uq_scheduler_job_idempotency_key"

// insertRetryable is IsRetryable plus a clash on the idempotency index.
func insertRetryable(err error) bool {
	return IsRetryable(err) || isDuplicateKey(err, idempotencyIndex)
}

// insertBatch is insertJobs in a transaction: the Insert of the shared
// InsertJobs and InsertJobsTx (sqlcore.TxInserts).
func insertBatch(ctx context.Context, tx *sql.Tx, jobs []*spi.Job) ([]spi.InsertResult, error) {
	return insertJobs(ctx, tx, jobs)
}

// insertJobs resolves idempotency keys, then inserts the new jobs and their
// tags with multi-row statements.
func insertJobs(ctx context.Context, q querier, jobs []*spi.Job) ([]spi.InsertResult, error) {
	existing, err := existingKeys(ctx, q, jobs)
	if err != nil {
		return nil, err
	}
	res, fresh := sqlcore.Dedupe(jobs, existing)
	for start := 0; start < len(fresh); start += rowsPerInsert {
		chunk := fresh[start:min(start+rowsPerInsert, len(fresh))]
		args := make([]any, 0, len(chunk)*numInsertArgs)
		for _, j := range chunk {
			a, err := insertArgs(j)
			if err != nil {
				return nil, err
			}
			args = append(args, a...)
		}
		if _, err := q.ExecContext(ctx, insertJobsSQL(len(chunk)), args...); err != nil {
			return nil, err
		}
	}
	tagArgs := tagRows(fresh)
	for start := 0; start < len(tagArgs); start += 2 * tagsPerInsert {
		chunk := tagArgs[start:min(start+2*tagsPerInsert, len(tagArgs))]
		if _, err := q.ExecContext(ctx, insertTagsSQL(len(chunk)/2), chunk...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// tagRows returns the (job id, tag) arguments of the jobs' tags, each tag
// of a job once.
func tagRows(jobs []*spi.Job) []any {
	var out []any
	for _, j := range jobs {
		var seen []string
		for _, t := range j.Tags {
			if slices.Contains(seen, t) {
				continue
			}
			seen = append(seen, t)
			out = append(out, dbID(j.ID), name(t))
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
			keys = append(keys, name(k))
		}
	}
	found := make(map[string]uuid.UUID, len(keys))
	for start := 0; start < len(keys); start += keysPerLookup {
		chunk := keys[start:min(start+keysPerLookup, len(keys))]
		rows, err := q.QueryContext(ctx, existingKeysSQL(len(chunk)), chunk...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k, raw []byte
			if err := rows.Scan(&k, &raw); err != nil {
				rows.Close()
				return nil, err
			}
			id, err := parseID(raw)
			if err != nil {
				rows.Close()
				return nil, err
			}
			found[string(k)] = id
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// insertArgs are the parameters of one inserted row, in the order of
// insertColumns without status.
func insertArgs(j *spi.Job) ([]any, error) {
	var params any
	if j.Params != nil {
		b, err := json.Marshal(j.Params)
		if err != nil {
			return nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
		}
		params = string(b)
	}
	backoff := string(j.Backoff)
	return []any{
		dbID(j.ID), j.TaskName, nullBytes(j.Payload), int64(j.Priority),
		dbTime(j.ScheduledAt), nullDBTime(j.CreatedAt),
		int64(j.Attempts), int64(j.MaxRetries), backoff, j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), nullName(j.OwnerNode),
		nullDBTime(j.ClaimedAt), nullDBTime(j.FinishedAt), nullText(j.LastError),
		nullBytes(j.Result), nullText(j.ResultType), nullName(j.IdempotencyKey), params,
		nullName(j.Resource), int64(j.ResourceLimit),
	}, nil
}
