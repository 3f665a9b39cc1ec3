package postgres

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// coreColumns selects one job in the form of sqlcore.JobColumns (the tags
// as a JSON array), read by the dialect's Decode through database/sql and
// pgx alike.
var coreColumns = sqlcore.JobColumns(sqlcore.CaseNull,
	"(SELECT json_agg(t.tag ORDER BY t.tag) FROM {tag} t WHERE t.job_id = j.job_id)")

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

// decode is the dialect's Decode (sqlcore.Dialect.Decode) for the current
// row of pgx rows of coreColumns followed by the columns of extra: the
// same columns read into pgx's own types, then sqlcore.Dialect.Finish as
// Decode does, so the result is Decode's. Decode's database/sql types (a
// Scanner per nullable text, a boxed value per time) made half of its
// cost, which the claim pays on its critical path for up to 1,000 rows.
func (s *Store) decode(rows pgx.Rows, extra ...any) (*spi.Job, pgtype.UUID, int64, error) {
	var (
		r                                          sqlcore.Row
		raw, workflow                              pgtype.UUID
		task, backoff, owner, lastErr, rtype, idem pgtype.Text
		params, res                                pgtype.Text
		tags                                       []byte
		payloadNull, resultNull                    int64
		times                                      [4]pgtype.Timestamptz // scheduled, created, claimed, finished
	)
	dest := []any{&raw, &task, &r.Payload, &payloadNull, &r.Status, &r.Priority,
		&times[0], &times[1], &r.Attempts, &r.MaxRetries, &backoff, &r.BackoffParamUS,
		&r.ClaimSeq, &r.CrashCount, &owner, &times[2], &times[3], &lastErr,
		&r.Result, &resultNull, &rtype, &idem, &params, &res, &r.ResourceLimit,
		&workflow, &r.DepCount, &r.DepWaiting, &r.DepChildren, &r.TraceContext, &tags}
	err := rows.Scan(append(dest, extra...)...)
	r.Task, r.Backoff, r.OwnerNode, r.LastError = task.String, backoff.String, owner.String, lastErr.String
	r.ResultType, r.IdempotencyKey, r.Resource = rtype.String, idem.String, res.String
	r.Params = sql.NullString{String: params.String, Valid: params.Valid}
	r.Payload, r.Result = sqlcore.Blob(r.Payload, payloadNull != 0), sqlcore.Blob(r.Result, resultNull != 0)
	var timeErr error
	for i, out := range []*time.Time{&r.Scheduled, &r.Created, &r.Claimed, &r.Finished} {
		switch t := times[i]; {
		case !t.Valid:
		case t.InfinityModifier != pgtype.Finite:
			timeErr = fmt.Errorf("a time column holds %s", t.InfinityModifier)
		default:
			*out = t.Time.UTC()
		}
	}
	return s.dialect.Finish(&r, raw, sql.Null[pgtype.UUID]{V: workflow, Valid: workflow.Valid},
		sql.NullString{String: string(tags), Valid: tags != nil}, err, timeErr)
}
