package sqlserver

import (
	"database/sql"
	"database/sql/driver"
	"time"
)

// convertAssign stores the driver value v into dest as database/sql's Scan
// would, through a one-row query on a throw-away fake.
func convertAssign(dest any, v driver.Value) error {
	f := &fakeDB{t: nopT{}, handler: func(string, []driver.NamedValue) (fakeResult, error) {
		return fakeResult{sets: []fakeSet{{cols: []string{"c"}, rows: [][]driver.Value{{v}}}}}, nil
	}}
	db := f.open()
	defer db.Close()
	return db.QueryRow("SELECT 1").Scan(dest)
}

// sqlNullTime builds a sql.NullTime.
func sqlNullTime(t time.Time, valid bool) sql.NullTime { return sql.NullTime{Time: t, Valid: valid} }
