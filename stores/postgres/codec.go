package postgres

import (
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

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
