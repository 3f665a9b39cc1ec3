package mysql

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumnsTemplate selects one job of the table aliased j with its tags
// (the hex of each tag, sorted, comma-separated), in the order of
// rowScan.dest; {tag} is the qualified tag table.
const jobColumnsTemplate = `j.job_id, j.task_name, j.payload, j.payload IS NULL, j.status, j.priority,
	j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us,
	j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error,
	j.job_result, j.job_result IS NULL, j.result_type, j.idempotency_key, j.params,
	j.resource_name, j.resource_limit,
	(SELECT GROUP_CONCAT(HEX(t.tag) ORDER BY t.tag SEPARATOR ',') FROM {tag} t WHERE t.job_id = j.job_id)`

// rowScan holds the raw columns of one job row.
type rowScan struct {
	id                                                  []byte
	task, status, backoff                               string
	payload, result                                     []byte
	payloadNull, resultNull                             bool
	priority                                            int64
	scheduled                                           time.Time
	attempts, maxRetries, backoffParam, claimSeq, crash int64
	created, claimed, finished                          sql.NullTime
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
		return corrupt(r.idString(), "unreadable column: %v", err)
	}
	return nil
}

// idString names the row's job for error messages.
func (r *rowScan) idString() string {
	if len(r.id) == 16 {
		return uuid.UUID(r.id).String()
	}
	return "0x" + hex.EncodeToString(r.id)
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
		IDText: r.idString(), Task: r.task, Status: r.status, Backoff: r.backoff,
		Payload: sqlcore.Blob(r.payload, r.payloadNull), Result: sqlcore.Blob(r.result, r.resultNull),
		Priority: r.priority, Scheduled: r.scheduled.UTC(),
		Created: nullTime(r.created), Claimed: nullTime(r.claimed), Finished: nullTime(r.finished),
		Attempts: r.attempts, MaxRetries: r.maxRetries, BackoffParamUS: r.backoffParam,
		ClaimSeq: r.claimSeq, CrashCount: r.crash,
		OwnerNode: r.owner.String, LastError: r.lastError.String, ResultType: r.resultType.String,
		IdempotencyKey: r.idemKey.String, Resource: r.resource.String, ResourceLimit: r.resourceLimit,
		Params: r.params,
	}
	if len(r.id) == 16 {
		row.ID = uuid.UUID(r.id)
	} else {
		row.Problem = fmt.Sprintf("job_id is %d bytes, not 16", len(r.id))
	}
	if r.tags.Valid && r.tags.String != "" {
		for _, h := range strings.Split(r.tags.String, ",") {
			t, err := hex.DecodeString(h)
			if err != nil {
				return nil, corrupt(row.IDText, "unreadable tags: %v", err)
			}
			row.Tags = append(row.Tags, string(t))
		}
	}
	return row.Job()
}

// corrupt names a corrupt job row.
var corrupt = sqlcore.Corrupt

// dbTime is the stored form of a time: UTC, truncated to the microsecond
// precision of DATETIME(6) (the driver would otherwise round).
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// nullTime reads a nullable time column; NULL is the zero time.
func nullTime(v sql.NullTime) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// nullDBTime stores the zero time as NULL.
func nullDBTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return dbTime(t)
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullBinary stores "" as NULL and anything else as the bytes of s, for
// VARBINARY columns.
func nullBinary(s string) any {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// nullBytes stores nil as NULL and anything else, even empty, as a BLOB.
func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// binID is the stored form of a job id.
func binID(id uuid.UUID) []byte { return id[:] }

// scanID reads a BINARY(16) job id.
func scanID(b []byte) (uuid.UUID, error) {
	if len(b) != 16 {
		return uuid.Nil, corrupt("0x"+hex.EncodeToString(b), "job_id is %d bytes, not 16", len(b))
	}
	return uuid.UUID(b), nil
}

// marks returns "?, ?, ?" for n placeholders.
func marks(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// idArgs returns the stored forms of ids, as statement arguments.
func idArgs(ids []uuid.UUID) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = binID(id)
	}
	return out
}

// anys returns ids as statement arguments.
func anys[E any](ids []E) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// binArgs returns the bytes of each string, as statement arguments for a
// VARBINARY column.
func binArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// uniqueTags returns tags without repeats, in the order given.
func uniqueTags(tags []string) []string {
	if len(tags) < 2 {
		return tags
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// decoder returns the decoder of the current row of rows, with its own
// scan buffers: the Decoder of sqlcore.JobReads.
func decoder(rows *sql.Rows) func() (*spi.Job, error) {
	var r rowScan
	return func() (*spi.Job, error) { return r.decode(rows) }
}
