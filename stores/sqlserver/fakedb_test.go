package sqlserver

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/ratchet-go/ratchet/internal/dbtest/fakesql"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// fakeDB is a database/sql driver that records every statement and answers
// with what a test's handler returns: the claim and completion paths are
// checked against it without a server. Every statement is checked to name
// exactly the parameters @p1..@pN given to it.
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
func (f *fakeDB) open() *sql.DB { return fakesql.Open(fakeBackend{f}) }

// fakeBackend answers fakesql's driver from the fake.
type fakeBackend struct{ f *fakeDB }

func (b fakeBackend) Run(q string, args []driver.NamedValue) ([]fakesql.Set, int64, error) {
	res, err := b.f.run(q, args)
	if err != nil {
		return nil, 0, err
	}
	sets := make([]fakesql.Set, len(res.sets))
	for i, s := range res.sets {
		sets[i] = fakesql.Set{Cols: s.cols, Rows: s.rows}
	}
	return sets, res.affected, nil
}

func (b fakeBackend) Record(what string) { b.f.record(what, nil) }

func (b fakeBackend) Commit() error {
	b.f.mu.Lock()
	defer b.f.mu.Unlock()
	if len(b.f.commits) == 0 {
		return nil
	}
	err := b.f.commits[0]
	b.f.commits = b.f.commits[1:]
	return err
}

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

var paramRef = regexp.MustCompile(`@p([0-9]+)\b`)

// checkParams fails the test unless q names exactly @p1..@pN for N args.
func checkParams(t testing.TB, q string, n int) {
	t.Helper()
	used := map[int]bool{}
	for _, m := range paramRef.FindAllStringSubmatch(q, -1) {
		i, _ := strconv.Atoi(m[1])
		used[i] = true
	}
	for i := range used {
		if i < 1 || i > n {
			t.Errorf("statement names @p%d but has %d arguments:\n%s", i, n, q)
		}
	}
	for i := 1; i <= n; i++ {
		if !used[i] {
			t.Errorf("argument %d is never used by the statement:\n%s", i, q)
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

// jobSet is a result set of job rows as the server returns jobColumns.
func jobSet(jobs ...*spi.Job) fakeSet {
	set := fakeSet{cols: jobColumnList}
	for _, j := range jobs {
		set.rows = append(set.rows, jobRow(j))
	}
	return set
}

// jobRow is the raw row of j: what go-mssqldb returns for each column.
func jobRow(j *spi.Job) []driver.Value {
	nt := func(t time.Time) driver.Value {
		if t.IsZero() {
			return nil
		}
		return t.UTC()
	}
	nb := func(s string) driver.Value {
		if s == "" {
			return nil
		}
		return []byte(s)
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
		type tagCell struct {
			T []byte `json:"t"`
		}
		cells := make([]tagCell, len(j.Tags))
		for i, t := range j.Tags {
			cells[i] = tagCell{[]byte(t)}
		}
		b, _ := json.Marshal(cells)
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
		j.ID[:], j.TaskName, payload, isNull(j.Payload), string(j.Status), int64(j.Priority),
		j.ScheduledAt.UTC(), nt(j.CreatedAt), int64(j.Attempts), int64(j.MaxRetries), string(j.Backoff), j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), nb(j.OwnerNode), nt(j.ClaimedAt), nt(j.FinishedAt), ns(j.LastError),
		result, isNull(j.Result), ns(j.ResultType), nb(j.IdempotencyKey), params, nb(j.Resource), int64(j.ResourceLimit), tags,
	}
}

// deadlock is the error SQL Server returns to a deadlock victim.
var deadlock = mssql.Error{Number: errDeadlockVictim, Message: "Transaction (Process ID 57) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction."}

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

// argTime reads a DATETIME2 argument back as a UTC time.
func argTime(v driver.Value) time.Time {
	switch x := v.(type) {
	case civil.DateTime:
		return x.In(time.UTC)
	case mssql.NullDateTime:
		if !x.Valid {
			return time.Time{}
		}
		return x.DateTime.In(time.UTC)
	}
	panic(fmt.Sprintf("not a time argument: %T", v))
}

// jobColumnList are the column names of a job row, in scan order.
var jobColumnList = sqlcore.JobColumnNames()
