package mysql

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

const (
	// rowsPerInsert bounds the rows of one multi-row INSERT; the statement
	// budget (a share of max_allowed_packet) bounds its size.
	rowsPerInsert = 500
	// tagsPerInsert bounds the rows of one INSERT of tags.
	tagsPerInsert = 2000
	// idemKeyIndex names the unique index of idempotency keys, as duplicate
	// key errors quote it.
	idemKeyIndex = "uq_scheduler_job_idempotency_key"
)

// insertRetryable is retryable plus a clash on the idempotency index: a
// key committed by another transaction under this one's INSERT, which the
// insert then runs again and finds.
func insertRetryable(err error) bool {
	return retryable(err) || errCode(err) == errDuplicateKey && strings.Contains(err.Error(), idemKeyIndex)
}

// insertJobsSQL is the InsertJobsSQL of the dialect: one multi-row INSERT.
func (st statements) insertJobsSQL(jobs []*spi.Job) (string, []any, error) {
	args := make([]any, 0, len(jobs)*numInsertColumns)
	for _, j := range jobs {
		var params any
		if j.Params != nil {
			b, err := json.Marshal(j.Params)
			if err != nil {
				return "", nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
			}
			params = string(b)
		}
		args = append(args, insertArgs(j, params)...)
	}
	return "INSERT INTO " + st.t.job + " (" + insertColumns + ") VALUES " + rowMarks(len(jobs), numInsertColumns), args, nil
}

// insertTagsSQL is the InsertTagsSQL of the dialect.
func (st statements) insertTagsSQL(tags []sqlcore.JobTag) (string, []any) {
	args := make([]any, 0, 2*len(tags))
	for _, t := range tags {
		args = append(args, binID(t.ID), []byte(t.Tag))
	}
	return "INSERT INTO " + st.t.tag + " (job_id, tag) VALUES " + rowMarks(len(tags), 2), args
}

// existingKeysSQL reads the jobs that hold keys with a locking read, so
// that rows committed after the transaction's snapshot are seen.
func (st statements) existingKeysSQL(keys []string) (string, []any) {
	return `SELECT idempotency_key, job_id FROM ` + st.t.job + `
		WHERE idempotency_key IN (` + marks(len(keys)) + `) LOCK IN SHARE MODE`, binArgs(keys)
}

// rowSize estimates the SQL text of one job's row: binary values may
// double when escaped.
func rowSize(j *spi.Job) int {
	return 400 + 2*(len(j.Payload)+len(j.Result)+len(j.IdempotencyKey)+len(j.Resource)) +
		len(j.TaskName) + len(j.LastError) + len(j.ResultType) + len(j.OwnerNode) + 64*len(j.Params)
}

func insertArgs(j *spi.Job, params any) []any {
	return []any{
		binID(j.ID), j.TaskName, nullBytes(j.Payload), string(spi.StatusPending), int64(j.Priority),
		dbTime(j.ScheduledAt), nullDBTime(j.CreatedAt),
		int64(j.Attempts), int64(j.MaxRetries), string(j.Backoff), j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), nullBinary(j.OwnerNode),
		nullDBTime(j.ClaimedAt), nullDBTime(j.FinishedAt), nullString(j.LastError),
		nullBytes(j.Result), nullString(j.ResultType), nullBinary(j.IdempotencyKey), params,
		nullBinary(j.Resource), int64(j.ResourceLimit),
	}
}

// rowMarks returns "(?, ?), (?, ?)" for rows rows of cols columns.
func rowMarks(rows, cols int) string {
	row := "(" + marks(cols) + ")"
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
