package sqlserver

// idempotencyIndex is the unique index of the idempotency keys; a
// concurrent insert of the same new key can still fail on it, and the
// insert then runs again and finds the key.
const idempotencyIndex = "uq_scheduler_job_idempotency_key"

// insertRetryable is IsRetryable plus a clash on the idempotency index.
func insertRetryable(err error) bool {
	return IsRetryable(err) || isDuplicateKey(err, idempotencyIndex)
}
