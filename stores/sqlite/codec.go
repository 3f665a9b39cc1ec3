package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/ratchet-go/ratchet/sdk/spi"
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

// job decodes the row, or returns an error wrapping spi.ErrCorruptJob that
// names the job and the problem.
func (r *rowScan) job() (*spi.Job, error) {
	id, err := uuid.Parse(r.id)
	if err != nil || id.String() != r.id {
		return nil, corrupt(r.id, "job_id %q is not a canonical UUID", r.id)
	}
	st := spi.Status(r.status)
	if !st.Valid() {
		return nil, corrupt(r.id, "unknown status %q", r.status)
	}
	p := spi.Priority(r.priority)
	if !p.Valid() {
		return nil, corrupt(r.id, "priority %d out of range 0..4", r.priority)
	}
	j := &spi.Job{
		ID:             id,
		TaskName:       r.task,
		Payload:        blob(r.payload, r.payloadNull),
		Status:         st,
		Priority:       p,
		ScheduledAt:    fromMicros(r.scheduled),
		CreatedAt:      nullTime(r.created),
		Attempts:       int(r.attempts),
		MaxRetries:     int(r.maxRetries),
		Backoff:        spi.BackoffKind(r.backoff),
		BackoffParam:   time.Duration(r.backoffParam) * time.Microsecond,
		CrashCount:     int(r.crash),
		ClaimSeq:       r.claimSeq,
		OwnerNode:      r.owner.String,
		ClaimedAt:      nullTime(r.claimed),
		FinishedAt:     nullTime(r.finished),
		LastError:      r.lastError.String,
		Result:         blob(r.result, r.resultNull),
		ResultType:     r.resultType.String,
		IdempotencyKey: r.idemKey.String,
		Resource:       r.resource.String,
		ResourceLimit:  int(r.resourceLimit),
	}
	if r.params.Valid {
		if err := json.Unmarshal([]byte(r.params.String), &j.Params); err != nil {
			return nil, corrupt(r.id, "params are not a JSON object of strings: %v", err)
		}
	}
	if r.tags.Valid && r.tags.String != "[]" {
		if err := json.Unmarshal([]byte(r.tags.String), &j.Tags); err != nil {
			return nil, corrupt(r.id, "unreadable tags: %v", err)
		}
	}
	return j, nil
}

func corrupt(id, format string, args ...any) error {
	return fmt.Errorf("%w: job %s: %s", spi.ErrCorruptJob, id, fmt.Sprintf(format, args...))
}

// blob restores nil for NULL and an empty slice for an empty BLOB (the
// driver returns nil for both).
func blob(b []byte, isNull bool) []byte {
	if isNull {
		return nil
	}
	if b == nil {
		return []byte{}
	}
	return b
}

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
