package fakesql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
)

// Set is one result set: column names and rows of driver values.
type Set struct {
	Cols []string
	Rows [][]driver.Value
}

// Backend answers the statements of a fake database.
type Backend interface {
	// Run answers statement q with args: its result sets (none for an
	// Exec or a statement that returns nothing) and rows affected.
	Run(q string, args []driver.NamedValue) (sets []Set, affected int64, err error)
	// Record notes "BEGIN", "COMMIT" or "ROLLBACK".
	Record(what string)
	// Commit is the outcome of a COMMIT (after Record("COMMIT")).
	Commit() error
}

// Open returns a *sql.DB whose connections all go to b.
func Open(b Backend) *sql.DB { return sql.OpenDB(connector{b}) }

type connector struct{ b Backend }

func (c connector) Connect(context.Context) (driver.Conn, error) { return &conn{b: c.b}, nil }
func (c connector) Driver() driver.Driver                        { return fakeDriver{c.b} }

type fakeDriver struct{ b Backend }

func (d fakeDriver) Open(string) (driver.Conn, error) { return &conn{b: d.b}, nil }

type conn struct{ b Backend }

func (c *conn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fakesql: Prepare is not supported")
}
func (c *conn) Close() error { return nil }
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c *conn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.b.Record("BEGIN")
	return tx{c.b}, nil
}
func (c *conn) CheckNamedValue(*driver.NamedValue) error { return nil }
func (c *conn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	sets, _, err := c.b.Run(q, args)
	if err != nil {
		return nil, err
	}
	if len(sets) == 0 {
		sets = []Set{{Cols: []string{"x"}}}
	}
	return &rows{sets: sets}, nil
}
func (c *conn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	_, affected, err := c.b.Run(q, args)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(affected), nil
}

type tx struct{ b Backend }

func (t tx) Commit() error {
	t.b.Record("COMMIT")
	return t.b.Commit()
}

func (t tx) Rollback() error {
	t.b.Record("ROLLBACK")
	return nil
}

type rows struct {
	sets []Set
	row  int
}

func (r *rows) Columns() []string { return r.sets[0].Cols }
func (r *rows) Close() error      { return nil }
func (r *rows) Next(dest []driver.Value) error {
	set := r.sets[0]
	if r.row >= len(set.Rows) {
		return io.EOF
	}
	copy(dest, set.Rows[r.row])
	r.row++
	return nil
}
func (r *rows) HasNextResultSet() bool { return len(r.sets) > 1 }
func (r *rows) NextResultSet() error {
	if len(r.sets) < 2 {
		return io.EOF
	}
	r.sets, r.row = r.sets[1:], 0
	return nil
}
