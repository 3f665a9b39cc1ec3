package sqlserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/golang-sql/civil"
	"github.com/google/uuid"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumns selects one job from the table aliased j, in the order of
// sqlcore.JobColumns (see Dialect.Decode): the NULL flags as CASE expressions (the driver may return
// nil for an empty VARBINARY), the tags as a JSON array of objects
// {"t": base64 bytes}, from FOR JSON PATH.
var jobColumns = sqlcore.JobColumns(sqlcore.CaseNull,
	"(SELECT t.tag AS t FROM scheduler_job_tag t WHERE t.job_id = j.job_id FOR JSON PATH)")

// idText names a stored id in messages.
var idText = sqlcore.BinaryIDText("0x%X")

// Tags reads the tags column: a JSON array of objects {"t": base64
// bytes}, from FOR JSON PATH.
func (database) Tags(col string) ([]string, error) {
	var cells []struct {
		T []byte `json:"t"`
	}
	if err := json.Unmarshal([]byte(col), &cells); err != nil {
		return nil, err
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = string(c.T)
	}
	return out, nil
}

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

// idArgs returns the stored forms of ids, as statement arguments.
func idArgs(ids []uuid.UUID) []any {
	return sqlcore.Args(ids, func(id uuid.UUID) any { return dbID(id) })
}

// dbID is the stored form of a job id: its 16 bytes in UUID order, sent as
// VARBINARY and compared with the BINARY(16) columns byte for byte.
func dbID(id uuid.UUID) []byte {
	b := make([]byte, 16)
	copy(b, id[:])
	return b
}

// ParseID reads a stored job id.
func (database) ParseID(b []byte) (uuid.UUID, error) {
	if len(b) != 16 {
		return uuid.Nil, sqlcore.Corrupt(fmt.Sprintf("0x%X", b), "job_id is %d bytes, not 16", len(b))
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
