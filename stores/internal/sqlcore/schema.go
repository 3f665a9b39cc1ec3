package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// DBTX is what *sql.DB and *sql.Tx have in common: a store's statements
// run on either.
type DBTX interface {
	Querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Querier is what *sql.DB, *sql.Conn and *sql.Tx have in common for
// reads: the read half of DBTX.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SchemaState is what a database holds of Ratchet's tables.
type SchemaState struct {
	// Tables are the Ratchet tables present, sorted.
	Tables []string
	// HasRows: the version table has rows.
	HasRows bool
	// Version is the highest recorded version, 0 for none.
	Version int
}

// Has reports whether table is present.
func (st SchemaState) Has(table string) bool { return slices.Contains(st.Tables, table) }

// Missing lists the tables of the recorded version that the schema lacks;
// tablesAt lists the tables a version has.
func (st SchemaState) Missing(tablesAt func(version int) []string) []string {
	var out []string
	for _, t := range tablesAt(st.Version) {
		if !st.Has(t) {
			out = append(out, t)
		}
	}
	return out
}

// ReadSchema reads the state through q: listSQL selects the names of the
// Ratchet tables present (one column), versionTable holds the recorded
// versions.
func ReadSchema(ctx context.Context, q Querier, listSQL, versionTable string) (SchemaState, error) {
	var st SchemaState
	rows, err := q.QueryContext(ctx, listSQL)
	if err != nil {
		return st, err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return st, err
		}
		st.Tables = append(st.Tables, n)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return st, err
	}
	slices.Sort(st.Tables)
	if !st.Has(versionTable) {
		return st, nil
	}
	var v sql.NullInt64
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT MAX(version), COUNT(*) FROM `+versionTable).Scan(&v, &n); err != nil {
		return st, fmt.Errorf("read %s: %w", versionTable, err)
	}
	st.HasRows = n > 0
	st.Version = int(v.Int64)
	return st, nil
}
