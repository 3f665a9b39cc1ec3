package sqlite

import (
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

// The insert statements of sqlcore.Dialect.

func existingKeysSQL(keys []string) (string, []any) {
	return `SELECT idempotency_key, job_id FROM scheduler_job
		WHERE idempotency_key IN (SELECT value FROM json_each(?))`, []any{jsonList(keys)}
}

func insertJobsSQL(jobs []*spi.Job) (string, []any, error) {
	args := make([]any, 0, len(jobs)*numInsertColumns)
	for _, j := range jobs {
		a, err := insertArgs(j)
		if err != nil {
			return "", nil, err
		}
		args = append(args, a...)
	}
	return "INSERT INTO scheduler_job (" + insertColumns + ") VALUES " + placeholders(len(jobs), numInsertColumns), args, nil
}

func insertTagsSQL(tags []sqlcore.JobTag) (string, []any) {
	args := make([]any, 0, 2*len(tags))
	for _, t := range tags {
		args = append(args, t.ID.String(), t.Tag)
	}
	return "INSERT OR IGNORE INTO scheduler_job_tag (job_id, tag) VALUES " + placeholders(len(tags), 2), args
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
// sqlcore.Dialect).
func listJobsSQL(after uuid.UUID, status spi.Status, limit int) (string, []any) {
	q := `SELECT ` + jobColumns + ` FROM scheduler_job WHERE job_id > ?`
	args := []any{after.String()}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, string(status))
	}
	return q + ` ORDER BY job_id LIMIT ?`, append(args, limit)
}
