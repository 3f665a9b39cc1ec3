package oracle

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	go_ora "github.com/sijms/go-ora/v2"
	"github.com/sijms/go-ora/v2/network"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// fakeDB is a database/sql driver that records every statement and answers
// with what a test's handler returns: the claim and completion paths are
// checked against it without a server. Every statement is checked to name
// exactly the binds :1..:N given to it, each once, in order.
type fakeDB struct {
	t       testing.TB
	mu      sync.Mutex
	log     []string // "BEGIN", "COMMIT", "ROLLBACK" and the statements
	args    [][]driver.NamedValue
	handler func(q string, args []driver.NamedValue) (fakeResult, error)
	commits []error // errors of successive commits (nil: success)
}

// fakeResult is the answer to one statement.
type fakeResult struct {
	sets     []fakeSet
	affected int64
}

// fakeSet is one result set.
type fakeSet struct {
	cols []string
	rows [][]driver.Value
}

// open returns a *sql.DB on the fake.
func (f *fakeDB) open() *sql.DB { return sql.OpenDB(fakeConnector{f}) }

// statements returns the log, each statement shortened to its first line.
func (f *fakeDB) statements() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.log))
	for i, q := range f.log {
		out[i] = firstLine(q)
	}
	return out
}

func firstLine(q string) string {
	q = strings.TrimSpace(q)
	if i := strings.IndexByte(q, '\n'); i >= 0 {
		q = q[:i]
	}
	return q
}

func (f *fakeDB) record(q string, args []driver.NamedValue) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, q)
	f.args = append(f.args, args)
}

var paramRef = regexp.MustCompile(`:([0-9]+)\b`)

// checkParams fails the test unless q names exactly :1..:N for N args,
// each once and in order, as go-ora binds them by position.
func checkParams(t testing.TB, q string, n int) {
	t.Helper()
	var got []int
	for _, m := range paramRef.FindAllStringSubmatch(q, -1) {
		i, _ := strconv.Atoi(m[1])
		got = append(got, i)
	}
	if len(got) != n {
		t.Errorf("statement has %d placeholders and %d arguments:\n%s", len(got), n, q)
		return
	}
	for k, i := range got {
		if i != k+1 {
			t.Errorf("placeholder %d is :%d, want :%d:\n%s", k+1, i, k+1, q)
			return
		}
	}
}

func (f *fakeDB) run(q string, args []driver.NamedValue) (fakeResult, error) {
	checkParams(f.t, q, len(args))
	f.record(q, args)
	if f.handler == nil {
		return fakeResult{}, nil
	}
	return f.handler(q, args)
}

type fakeConnector struct{ f *fakeDB }

func (c fakeConnector) Connect(context.Context) (driver.Conn, error) { return &fakeConn{f: c.f}, nil }
func (c fakeConnector) Driver() driver.Driver                        { return fakeDriver{c.f} }

type fakeDriver struct{ f *fakeDB }

func (d fakeDriver) Open(string) (driver.Conn, error) { return &fakeConn{f: d.f}, nil }

type fakeConn struct{ f *fakeDB }

func (c *fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fake: Prepare is not supported")
}
func (c *fakeConn) Close() error { return nil }
func (c *fakeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c *fakeConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.f.record("BEGIN", nil)
	return fakeTx{c.f}, nil
}
func (c *fakeConn) CheckNamedValue(*driver.NamedValue) error { return nil }
func (c *fakeConn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	res, err := c.f.run(q, args)
	if err != nil {
		return nil, err
	}
	if len(res.sets) == 0 {
		res.sets = []fakeSet{{cols: []string{"x"}}}
	}
	return &fakeRows{sets: res.sets}, nil
}
func (c *fakeConn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.f.run(q, args)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(res.affected), nil
}

type fakeTx struct{ f *fakeDB }

func (t fakeTx) Commit() error {
	t.f.record("COMMIT", nil)
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if len(t.f.commits) == 0 {
		return nil
	}
	err := t.f.commits[0]
	t.f.commits = t.f.commits[1:]
	return err
}

func (t fakeTx) Rollback() error {
	t.f.record("ROLLBACK", nil)
	return nil
}

type fakeRows struct {
	sets []fakeSet
	row  int
}

func (r *fakeRows) Columns() []string { return r.sets[0].cols }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	set := r.sets[0]
	if r.row >= len(set.rows) {
		return io.EOF
	}
	copy(dest, set.rows[r.row])
	r.row++
	return nil
}
func (r *fakeRows) HasNextResultSet() bool { return len(r.sets) > 1 }
func (r *fakeRows) NextResultSet() error {
	if len(r.sets) < 2 {
		return io.EOF
	}
	r.sets, r.row = r.sets[1:], 0
	return nil
}

// jobSet is a result set of job rows as the server returns jobColumns.
func jobSet(jobs ...*spi.Job) fakeSet {
	set := fakeSet{cols: jobColumnList}
	for _, j := range jobs {
		set.rows = append(set.rows, jobRow(j))
	}
	return set
}

// jobRow is the raw row of j: what go-ora returns for each column (Oracle
// returns NULL for empty text).
func jobRow(j *spi.Job) []driver.Value {
	nt := func(t time.Time) driver.Value {
		if t.IsZero() {
			return nil
		}
		return t.UTC()
	}
	ns := func(s string) driver.Value {
		if s == "" {
			return nil
		}
		return s
	}
	isNull := func(b []byte) int64 {
		if b == nil {
			return 1
		}
		return 0
	}
	var params, tags driver.Value
	if j.Params != nil {
		b, _ := json.Marshal(j.Params)
		params = string(b)
	}
	if len(j.Tags) > 0 {
		b, _ := json.Marshal(j.Tags)
		tags = string(b)
	}
	var payload, result driver.Value
	if j.Payload != nil {
		payload = j.Payload
	}
	if j.Result != nil {
		result = j.Result
	}
	return []driver.Value{
		j.ID[:], ns(j.TaskName), payload, isNull(j.Payload), string(j.Status), int64(j.Priority),
		j.ScheduledAt.UTC(), nt(j.CreatedAt), int64(j.Attempts), int64(j.MaxRetries), ns(string(j.Backoff)), j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), ns(j.OwnerNode), nt(j.ClaimedAt), nt(j.FinishedAt), ns(j.LastError),
		result, isNull(j.Result), ns(j.ResultType), ns(j.IdempotencyKey), params, ns(j.Resource), int64(j.ResourceLimit), tags,
	}
}

// oraErr returns the error go-ora returns for ORA-code.
func oraErr(code int, msg string) error {
	return &network.OracleError{ErrCode: code, ErrMsg: fmt.Sprintf("ORA-%05d: %s", code, msg)}
}

// deadlock is the error Oracle returns to the statement that closed a
// deadlock.
var deadlock = oraErr(oraDeadlock, "deadlock detected while waiting for resource")

// fakeStore returns a store on f, without schema checks, that does not
// pause between retries.
func fakeStore(t *testing.T, f *fakeDB, opts Options) *Store {
	t.Helper()
	f.t = t
	s := wrap(f.open(), opts, true)
	s.pause = func(int) time.Duration { return 0 }
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// argTime reads a TIMESTAMP bind back as a UTC time.
func argTime(v driver.Value) time.Time {
	switch x := v.(type) {
	case go_ora.TimeStamp:
		return time.Time(x)
	case nil:
		return time.Time{}
	}
	panic(fmt.Sprintf("not a time argument: %T", v))
}

// jobColumnList are the column names of a job row, in scan order.
var jobColumnList = sqlcore.JobColumnNames()
