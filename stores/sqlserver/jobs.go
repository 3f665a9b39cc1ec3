package sqlserver

import (
	"encoding/json"
	"fmt"

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

// insertRows and insertTags are the InsertJobsSQL and InsertTagsSQL of the
// dialect.
func insertRows(jobs []*spi.Job) (string, []any, error) {
	args := make([]any, 0, len(jobs)*numInsertArgs)
	for _, j := range jobs {
		a, err := insertArgs(j)
		if err != nil {
			return "", nil, err
		}
		args = append(args, a...)
	}
	return insertJobsSQL(len(jobs)), args, nil
}

func insertTags(tags []sqlcore.JobTag) (string, []any) {
	args := make([]any, 0, 2*len(tags))
	for _, t := range tags {
		args = append(args, dbID(t.ID), name(t.Tag))
	}
	return insertTagsSQL(len(tags)), args
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
