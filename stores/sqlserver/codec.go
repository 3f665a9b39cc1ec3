package sqlserver

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/golang-sql/civil"
	"github.com/google/uuid"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumns selects one job from the table aliased j, in the order of
// rowScan.dest: the NULL flags as CASE expressions (the driver may return
// nil for an empty VARBINARY), the tags as a JSON array of objects
// {"t": base64 bytes}, from FOR JSON PATH.
var jobColumns = sqlcore.JobColumns(func(col string) string { return "CASE WHEN j." + col + " IS NULL THEN 1 ELSE 0 END" },
	"(SELECT t.tag AS t FROM scheduler_job_tag t WHERE t.job_id = j.job_id FOR JSON PATH)")

// rowScan holds the raw columns of one job row.
type rowScan struct {
	id, payload, result, owner, idem, resource []byte
	task, status, backoff                      string
	payloadNull, resultNull                    int64
	priority, attempts, maxRetries, crash      int64
	backoffParam, claimSeq, resourceLimit      int64
	scheduled                                  time.Time
	created, claimed, finished                 sql.NullTime
	lastError, resultType, params, tags        sql.NullString
}

func (r *rowScan) dest() []any {
	return []any{&r.id, &r.task, &r.payload, &r.payloadNull, &r.status, &r.priority,
		&r.scheduled, &r.created, &r.attempts, &r.maxRetries, &r.backoff, &r.backoffParam,
		&r.claimSeq, &r.crash, &r.owner, &r.claimed, &r.finished, &r.lastError,
		&r.result, &r.resultNull, &r.resultType, &r.idem, &r.params, &r.resource, &r.resourceLimit, &r.tags}
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

// idString names the row's job for messages.
func (r *rowScan) idString() string {
	if len(r.id) != 16 {
		if r.id == nil {
			return "(unknown id)"
		}
		return fmt.Sprintf("0x%X", r.id)
	}
	return uuid.UUID(r.id).String()
}

// tagCell is one element of the tags column.
type tagCell struct {
	T []byte `json:"t"`
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
		Payload: sqlcore.Blob(r.payload, r.payloadNull != 0), Result: sqlcore.Blob(r.result, r.resultNull != 0),
		Priority: r.priority, Scheduled: fromDB(r.scheduled),
		Created: nullTime(r.created), Claimed: nullTime(r.claimed), Finished: nullTime(r.finished),
		Attempts: r.attempts, MaxRetries: r.maxRetries, BackoffParamUS: r.backoffParam,
		ClaimSeq: r.claimSeq, CrashCount: r.crash,
		OwnerNode: string(r.owner), LastError: r.lastError.String, ResultType: r.resultType.String,
		IdempotencyKey: string(r.idem), Resource: string(r.resource), ResourceLimit: r.resourceLimit,
		Params: r.params,
	}
	if len(r.id) == 16 {
		row.ID = uuid.UUID(r.id)
	} else {
		row.Problem = fmt.Sprintf("job_id is %d bytes, not 16", len(r.id))
	}
	if r.tags.Valid && r.tags.String != "" {
		var cells []tagCell
		if err := json.Unmarshal([]byte(r.tags.String), &cells); err != nil {
			return nil, corrupt(row.IDText, "unreadable tags: %v", err)
		}
		row.Tags = make([]string, len(cells))
		for i, c := range cells {
			row.Tags[i] = string(c.T)
		}
	}
	return row.Job()
}

// corrupt names a corrupt job row.
var corrupt = sqlcore.Corrupt

// dbTime is the stored form of a time: a DATETIME2 parameter holding the
// UTC wall clock, truncated to the microsecond (the columns'
// precision). Whatever "timezone" the DSN sets, go-mssqldb sends a
// civil.DateTime's fields as they are.
func dbTime(t time.Time) civil.DateTime {
	return civil.DateTimeOf(t.UTC().Truncate(time.Microsecond))
}

// nullDBTime is dbTime with the zero time stored as a typed DATETIME2 NULL.
func nullDBTime(t time.Time) mssql.NullDateTime {
	if t.IsZero() {
		return mssql.NullDateTime{}
	}
	return mssql.NullDateTime{DateTime: dbTime(t), Valid: true}
}

// fromDB reads a DATETIME2 value as the UTC time of its wall clock: the
// driver returns the fields in the location of the DSN's timezone (UTC by
// default), and they are UTC fields.
func fromDB(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// nullTime reads a nullable time column; NULL is the zero time.
func nullTime(v sql.NullTime) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromDB(v.Time)
}

// idArgs returns the stored forms of ids, as statement arguments.
func idArgs(ids []uuid.UUID) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = dbID(id)
	}
	return out
}

// anys returns values as statement arguments.
func anys[E any](vs []E) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// nameArgs returns names as statement arguments (see name).
func nameArgs(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = name(n)
	}
	return out
}

// dbID is the stored form of a job id: its 16 bytes in UUID order, sent as
// VARBINARY and compared with the BINARY(16) columns byte for byte.
func dbID(id uuid.UUID) []byte {
	b := make([]byte, 16)
	copy(b, id[:])
	return b
}

// parseID reads a stored job id.
func parseID(b []byte) (uuid.UUID, error) {
	if len(b) != 16 {
		return uuid.Nil, corrupt(fmt.Sprintf("0x%X", b), "job_id is %d bytes, not 16", len(b))
	}
	return uuid.UUID(b), nil
}

// name is the stored form of a name compared byte for byte (VARBINARY):
// its UTF-8 bytes, never NULL.
func name(s string) []byte {
	b := []byte(s)
	if b == nil {
		b = []byte{}
	}
	return b
}

// nullName stores "" as a typed VARBINARY NULL.
func nullName(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// nullBytes keeps nil as a typed VARBINARY NULL and anything else, even
// empty, as a value. (An untyped nil would be sent as NVARCHAR NULL, which
// SQL Server does not convert to VARBINARY implicitly.)
func nullBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	return b
}

// nullText stores "" as NULL.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// decoder returns the decoder of the current row of rows, with its own
// scan buffers: the Decoder of sqlcore.JobReads.
func decoder(rows *sql.Rows) func() (*spi.Job, error) {
	var r rowScan
	return func() (*spi.Job, error) { return r.decode(rows) }
}
