package mysql

import (
	"github.com/ratchet-go/ratchet/sdk/spi"
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
	return retryable(err) || serverError.Is(err, idemKeyIndex, errDuplicateKey)
}

// rowSize estimates the SQL text of one job's row: binary values may
// double when escaped.
func rowSize(j *spi.Job) int {
	return 400 + 2*(len(j.Payload)+len(j.Result)+len(j.IdempotencyKey)+len(j.Resource)) +
		len(j.TaskName) + len(j.LastError) + len(j.ResultType) + len(j.OwnerNode) + 64*len(j.Params)
}
