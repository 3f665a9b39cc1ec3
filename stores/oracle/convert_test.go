package oracle

import (
	"database/sql/driver"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// decodeRow decodes one raw job row (the columns of jobColumnList) as the
// store reads it back, through a one-row query on a throw-away fake.
func decodeRow(row []driver.Value) (*spi.Job, error) {
	f := &fakeDB{Handler: func(string, []driver.NamedValue) (fakeResult, error) {
		return fakeResult{Sets: []fakeSet{{Cols: jobColumnList, Rows: [][]driver.Value{row}}}}, nil
	}}
	db := f.Open()
	defer db.Close()
	rows, err := db.Query("SELECT 1")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	j, _, _, err := dialect.Decode(rows)
	return j, err
}
