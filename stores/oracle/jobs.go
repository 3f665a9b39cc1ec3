package oracle

import (
	"context"
	"fmt"
	"slices"

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

// emptyBlobs is the AfterInsert of the dialect: it writes EMPTY_BLOB() for
// the empty payloads and results (a bind of an empty slice is NULL).
func emptyBlobs(ctx context.Context, q sqlcore.DBTX, jobs []*spi.Job) error {
	var emptyPayload, emptyResult [][]byte
	for _, j := range jobs {
		if isEmptyBlob(j.Payload) {
			emptyPayload = append(emptyPayload, dbID(j.ID))
		}
		if isEmptyBlob(j.Result) {
			emptyResult = append(emptyResult, dbID(j.ID))
		}
	}
	for _, e := range []struct {
		column string
		ids    [][]byte
	}{{"payload", emptyPayload}, {"job_result", emptyResult}} {
		if _, err := sqlcore.InChunks(e.ids, idsPerList, func(ids [][]byte) ([]struct{}, error) {
			query, args := emptyBlobsSQL(e.column, ids)
			_, err := q.ExecContext(ctx, query, args...)
			return nil, err
		}); err != nil {
			return err
		}
	}
	return nil
}
