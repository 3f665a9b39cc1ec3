package postgres

import (
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumns selects one job with its tags (sorted), in the order of
// rowScan.dest, from the table aliased j. It also serves as the RETURNING
// list of the claim.
const jobColumns = `j.job_id, j.task_name, j.payload, j.status, j.priority,
	j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us,
	j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error,
	j.job_result, j.result_type, j.idempotency_key, j.params, j.resource_name, j.resource_limit,
	(SELECT array_agg(t.tag ORDER BY t.tag) FROM {tag} t WHERE t.job_id = j.job_id)`

// coreColumns selects one job in the form of sqlcore.JobColumns (the tags
// as a JSON array), for the statements that run through database/sql.
var coreColumns = sqlcore.JobColumns(sqlcore.CaseNull,
	"(SELECT json_agg(t.tag ORDER BY t.tag) FROM {tag} t WHERE t.job_id = j.job_id)")

// numJobColumns is the number of columns of jobColumns.
const numJobColumns = 24

// rowScan holds the raw columns of one job row.
type rowScan struct {
	id                                         pgtype.UUID
	task, status, backoff                      string
	payload, result                            []byte
	priority, attempts, maxRetries, crash      int32
	backoffParam, claimSeq                     int64
	scheduled, created, claimed, finished      pgtype.Timestamptz
	owner, lastError, resultType, idem, params pgtype.Text
	resource                                   pgtype.Text
	resourceLimit                              int64
	tags                                       []string
}

func (r *rowScan) dest() []any {
	return []any{&r.id, &r.task, &r.payload, &r.status, &r.priority,
		&r.scheduled, &r.created, &r.attempts, &r.maxRetries, &r.backoff, &r.backoffParam,
		&r.claimSeq, &r.crash, &r.owner, &r.claimed, &r.finished, &r.lastError,
		&r.result, &r.resultType, &r.idem, &r.params, &r.resource, &r.resourceLimit, &r.tags}
}

// scan reads one row. A column that cannot be converted is a corrupt row;
// the id, read first, is already set when that happens.
func (r *rowScan) scan(rows pgx.Rows, extra ...any) error {
	*r = rowScan{}
	dest := append(r.dest(), extra...)
	if err := rows.Scan(dest...); err != nil {
		return sqlcore.Corrupt(r.idString(), "unreadable column: %v", err)
	}
	return nil
}

func (r *rowScan) idString() string {
	if !r.id.Valid {
		return "(unknown id)"
	}
	return uuid.UUID(r.id.Bytes).String()
}

// job decodes the row, or returns an error wrapping spi.ErrCorruptJob that
// names the job and the problem.
func (r *rowScan) job() (*spi.Job, error) {
	row := sqlcore.Row{
		ID: r.id.Bytes, IDText: r.idString(), Task: r.task, Status: r.status, Backoff: r.backoff,
		Payload: r.payload, Result: r.result, Priority: int64(r.priority),
		Attempts: int64(r.attempts), MaxRetries: int64(r.maxRetries), BackoffParamUS: r.backoffParam,
		ClaimSeq: r.claimSeq, CrashCount: int64(r.crash),
		OwnerNode: r.owner.String, LastError: r.lastError.String, ResultType: r.resultType.String,
		IdempotencyKey: r.idem.String, Resource: r.resource.String, ResourceLimit: r.resourceLimit,
		Params: sql.NullString{String: r.params.String, Valid: r.params.Valid}, Tags: r.tags,
	}
	for _, t := range []struct {
		ts  pgtype.Timestamptz
		dst *time.Time
	}{{r.scheduled, &row.Scheduled}, {r.created, &row.Created}, {r.claimed, &row.Claimed}, {r.finished, &row.Finished}} {
		if t.ts.Valid && t.ts.InfinityModifier != pgtype.Finite {
			row.Problem = "infinite timestamp"
		} else if t.ts.Valid {
			*t.dst = t.ts.Time.UTC()
		}
	}
	switch {
	case !r.id.Valid:
		row.Problem = "NULL job_id"
	case !r.scheduled.Valid:
		row.Problem = "NULL scheduled_time"
	}
	return row.Job()
}

// pgUUID is the pgx form of a job id.
func pgUUID(id uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: t, Valid: true}
}

// nullText stores "" as NULL.
func nullText(s string) pgtype.Text {
	return pgtype.Text{String: s, Valid: s != ""}
}
