package oracle

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	go_ora "github.com/sijms/go-ora/v2"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumns selects one job from the table aliased j, in the order of
// sqlcore.JobColumns (see Dialect.Decode): the NULL flags as CASE expressions (an empty BLOB is not
// NULL), the tags as a JSON array (JSON_ARRAYAGG).
var jobColumns = sqlcore.JobColumns(sqlcore.CaseNull,
	"(SELECT JSON_ARRAYAGG(t.tag ORDER BY t.tag RETURNING CLOB) FROM scheduler_job_tag t WHERE t.job_id = j.job_id)")

// idText names a stored id in messages.
var idText = sqlcore.BinaryIDText("HEXTORAW('%X')")

// dbTime is the stored form of a time: a TIMESTAMP bind (go-ora's
// TimeStamp, not a time.Time, which go-ora binds as TIMESTAMP WITH TIME
// ZONE) holding the UTC wall clock, truncated to the microsecond.
func dbTime(t time.Time) go_ora.TimeStamp {
	return go_ora.TimeStamp(t.UTC().Truncate(time.Microsecond))
}

// nullDBTime is dbTime with the zero time stored as NULL.
func nullDBTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return dbTime(t)
}

// dbID is the stored form of a job id: its 16 bytes in UUID order, bound
// as RAW and compared with the RAW(16) columns byte for byte.
func dbID(id uuid.UUID) []byte {
	b := make([]byte, 16)
	copy(b, id[:])
	return b
}

// ParseID reads a stored job id.
func (database) ParseID(b []byte) (uuid.UUID, error) {
	if len(b) != 16 {
		return uuid.Nil, sqlcore.Corrupt(fmt.Sprintf("HEXTORAW('%X')", b), "job_id is %d bytes, not 16", len(b))
	}
	return uuid.UUID(b), nil
}

// Limits of values bound inline: larger ones go through a temporary LOB,
// since Oracle refuses more than 4,000 bytes bound as RAW or VARCHAR2 for
// LOB columns when the statement has several (ORA-22295, ORA-01461).
const (
	maxInlineRaw  = 2000 // bytes of a RAW bind
	maxInlineText = 4000 // bytes of a VARCHAR2 bind
)

// blobArg binds b for a BLOB column: NULL for nil, RAW for small values,
// a temporary LOB for large ones. An empty, non-nil b binds NULL: the
// statements write EMPTY_BLOB() for it (see isEmptyBlob).
func blobArg(b []byte) any {
	switch {
	case len(b) == 0:
		return nil
	case len(b) <= maxInlineRaw:
		return b
	}
	return go_ora.Blob{Data: b}
}

// isEmptyBlob reports a value that must be stored as EMPTY_BLOB().
func isEmptyBlob(b []byte) bool { return b != nil && len(b) == 0 }

// clobArg binds s for a CLOB column: NULL for "", VARCHAR2 for short text,
// a temporary LOB for long text.
func clobArg(s string) any {
	switch {
	case s == "":
		return nil
	case len(s) <= maxInlineText:
		return s
	}
	return go_ora.Clob{String: s, Valid: true}
}

// text binds s for a VARCHAR2 column; Oracle stores "" as NULL.
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// newBinds returns the builder of a statement's :N binds.
func newBinds() *sqlcore.Binds { return &sqlcore.Binds{Mark: syntax.Mark} }

// idArgs returns stored ids as binds.
func idArgs(ids [][]byte) []any { return sqlcore.Args(ids, nil) }
