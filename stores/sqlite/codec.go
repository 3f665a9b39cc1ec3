package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumns selects one job with its tags, in the order of rowScan.dest.
// It also serves as the RETURNING list of the claim.
const jobColumns = `job_id, task_name, payload, payload IS NULL, status, priority,
	scheduled_time, created_time, attempts, max_retries, backoff_kind, backoff_param_us,
	claim_seq, crash_count, owner_node, claimed_time, finished_time, last_error,
	job_result, job_result IS NULL, result_type, idempotency_key, params,
	resource_name, resource_limit,
	(SELECT json_group_array(t.tag ORDER BY t.rowid) FROM scheduler_job_tag t WHERE t.job_id = scheduler_job.job_id)`

// rowScan holds the raw columns of one job row.
type rowScan struct {
	id, task, status, backoff                           string
	payload, result                                     []byte
	payloadNull, resultNull                             bool
	priority, scheduled                                 int64
	attempts, maxRetries, backoffParam, claimSeq, crash int64
	created, claimed, finished                          sql.NullInt64
	owner, lastError, resultType, idemKey, params, tags sql.NullString
	resource                                            sql.NullString
	resourceLimit                                       int64
}

func (r *rowScan) dest() []any {
	return []any{&r.id, &r.task, &r.payload, &r.payloadNull, &r.status, &r.priority,
		&r.scheduled, &r.created, &r.attempts, &r.maxRetries, &r.backoff, &r.backoffParam,
		&r.claimSeq, &r.crash, &r.owner, &r.claimed, &r.finished, &r.lastError,
		&r.result, &r.resultNull, &r.resultType, &r.idemKey, &r.params,
		&r.resource, &r.resourceLimit, &r.tags}
}

// scan reads one row. A column that cannot be converted is a corrupt row;
// the id, read first, is already set when that happens.
func (r *rowScan) scan(rows *sql.Rows) error {
	*r = rowScan{}
	if err := rows.Scan(r.dest()...); err != nil {
		return corrupt(r.id, "unreadable column: %v", err)
	}
	return nil
}

// decode scans the current row and decodes it (see scan and job).
func (r *rowScan) decode(rows *sql.Rows) (*spi.Job, error) {
	if err := r.scan(rows); err != nil {
		return nil, err
	}
	return r.job()
}

// job decodes the row, or returns an error wrapping spi.ErrCorruptJob that
// names the job and the problem.
func (r *rowScan) job() (*spi.Job, error) {
	row := sqlcore.Row{
		IDText: r.id, Task: r.task, Status: r.status, Backoff: r.backoff,
		Payload: sqlcore.Blob(r.payload, r.payloadNull), Result: sqlcore.Blob(r.result, r.resultNull),
		Priority: r.priority, Scheduled: fromMicros(r.scheduled),
		Created: nullTime(r.created), Claimed: nullTime(r.claimed), Finished: nullTime(r.finished),
		Attempts: r.attempts, MaxRetries: r.maxRetries, BackoffParamUS: r.backoffParam,
		ClaimSeq: r.claimSeq, CrashCount: r.crash,
		OwnerNode: r.owner.String, LastError: r.lastError.String, ResultType: r.resultType.String,
		IdempotencyKey: r.idemKey.String, Resource: r.resource.String, ResourceLimit: r.resourceLimit,
		Params: r.params,
	}
	id, err := uuid.Parse(r.id)
	if err != nil || id.String() != r.id {
		row.Problem = fmt.Sprintf("job_id %q is not a canonical UUID", r.id)
	}
	row.ID = id
	if r.tags.Valid && r.tags.String != "[]" {
		if err := json.Unmarshal([]byte(r.tags.String), &row.Tags); err != nil {
			return nil, corrupt(r.id, "unreadable tags: %v", err)
		}
	}
	return row.Job()
}

// corrupt names a corrupt job row.
var corrupt = sqlcore.Corrupt

// micros is the stored form of a time: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros is the UTC time of a stored value. The zero time round-trips.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// nullMicros stores the zero time as NULL.
func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// nullTime reads a nullable time column; NULL is the zero time.
func nullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullBytes stores nil as NULL and anything else, even empty, as a BLOB.
func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// jsonList encodes strings as a JSON array, for json_each.
func jsonList(items []string) string {
	if items == nil {
		items = []string{}
	}
	b, _ := json.Marshal(items)
	return string(b)
}

// idList encodes job ids as a JSON array of their text, for json_each.
func idList(ids []uuid.UUID) string {
	text := make([]string, len(ids))
	for i, id := range ids {
		text[i] = id.String()
	}
	return jsonList(text)
}

// decoder returns the decoder of the current row of rows, with its own
// scan buffers: the Decoder of sqlcore.JobReads.
func decoder(rows *sql.Rows) func() (*spi.Job, error) {
	var r rowScan
	return func() (*spi.Job, error) { return r.decode(rows) }
}
