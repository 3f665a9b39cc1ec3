package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// insertColumns are the columns InsertJobs writes, in the order of
// insertArgs.
const insertColumns = `job_id, task_name, payload, status, priority, scheduled_time, created_time,
	attempts, max_retries, backoff_kind, backoff_param_us, claim_seq, crash_count, owner_node,
	claimed_time, finished_time, last_error, job_result, result_type, idempotency_key, params,
	resource_name, resource_limit`

const (
	numInsertColumns = 23
	rowsPerInsert    = 200 // 4,600 parameters per statement, far below SQLite's limit
	tagsPerInsert    = 500
)

// insertJobs resolves idempotency keys, then inserts the new jobs and their
// tags with multi-row statements.
func insertJobs(ctx context.Context, tx *sql.Tx, jobs []*spi.Job) ([]spi.InsertResult, error) {
	existing, err := existingKeys(ctx, tx, jobs)
	if err != nil {
		return nil, err
	}
	res, fresh := sqlcore.Dedupe(jobs, existing)
	for start := 0; start < len(fresh); start += rowsPerInsert {
		chunk := fresh[start:min(start+rowsPerInsert, len(fresh))]
		args := make([]any, 0, len(chunk)*numInsertColumns)
		for _, j := range chunk {
			a, err := insertArgs(j)
			if err != nil {
				return nil, err
			}
			args = append(args, a...)
		}
		q := "INSERT INTO scheduler_job (" + insertColumns + ") VALUES " + placeholders(len(chunk), numInsertColumns)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return nil, err
		}
	}
	var tagArgs []any
	for _, j := range fresh {
		for _, t := range j.Tags {
			tagArgs = append(tagArgs, j.ID.String(), t)
		}
	}
	for start := 0; start < len(tagArgs); start += 2 * tagsPerInsert {
		chunk := tagArgs[start:min(start+2*tagsPerInsert, len(tagArgs))]
		q := "INSERT OR IGNORE INTO scheduler_job_tag (job_id, tag) VALUES " + placeholders(len(chunk)/2, 2)
		if _, err := tx.ExecContext(ctx, q, chunk...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// existingKeys maps the batch's idempotency keys that are already stored to
// their jobs' ids.
func existingKeys(ctx context.Context, tx *sql.Tx, jobs []*spi.Job) (map[string]uuid.UUID, error) {
	var keys []string
	for _, j := range jobs {
		if j.IdempotencyKey != "" {
			keys = append(keys, j.IdempotencyKey)
		}
	}
	found := make(map[string]uuid.UUID, len(keys))
	if len(keys) == 0 {
		return found, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT idempotency_key, job_id FROM scheduler_job
		WHERE idempotency_key IN (SELECT value FROM json_each(?))`, jsonList(keys))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, raw string
		if err := rows.Scan(&k, &raw); err != nil {
			return nil, err
		}
		id, err := uuid.Parse(raw)
		if err != nil {
			return nil, corrupt(raw, "job_id %q is not a UUID", raw)
		}
		found[k] = id
	}
	return found, rows.Err()
}

func insertArgs(j *spi.Job) ([]any, error) {
	var params any
	if j.Params != nil {
		b, err := json.Marshal(j.Params)
		if err != nil {
			return nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
		}
		params = string(b)
	}
	return []any{
		j.ID.String(), j.TaskName, nullBytes(j.Payload), string(spi.StatusPending), int64(j.Priority),
		micros(j.ScheduledAt), nullMicros(j.CreatedAt),
		int64(j.Attempts), int64(j.MaxRetries), string(j.Backoff), j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), nullString(j.OwnerNode),
		nullMicros(j.ClaimedAt), nullMicros(j.FinishedAt), nullString(j.LastError),
		nullBytes(j.Result), nullString(j.ResultType), nullString(j.IdempotencyKey), params,
		nullString(j.Resource), int64(j.ResourceLimit),
	}, nil
}

// placeholders returns "(?, ?), (?, ?)" for rows rows of cols columns.
func placeholders(rows, cols int) string {
	row := "(" + strings.Repeat("?, ", cols-1) + "?)"
	var b strings.Builder
	b.Grow(rows * (len(row) + 2))
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// listJobsSQL is the read of a page of jobs (the ListSQL of
// sqlcore.JobReads).
func listJobsSQL(after uuid.UUID, status spi.Status, limit int) (string, []any) {
	q := `SELECT ` + jobColumns + ` FROM scheduler_job WHERE job_id > ?`
	args := []any{after.String()}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, string(status))
	}
	return q + ` ORDER BY job_id LIMIT ?`, append(args, limit)
}
