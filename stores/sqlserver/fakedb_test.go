package sqlserver

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	"github.com/google/uuid"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/ratchet-go/ratchet/internal/dbtest/fakesql"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// fakeDB is the fake database of the offline tests: it records every
// statement and answers with what a test's handler returns, so that every
// store method is checked without a server. fakeStore makes it check each
// statement's placeholders (checkParams).
type fakeDB = fakesql.Recorder

// fakeResult is the answer to one statement, fakeSet one result set.
type (
	fakeResult = fakesql.Result
	fakeSet    = fakesql.Set
)

// firstLine is the first line of a statement.
var firstLine = fakesql.FirstLine

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

// jobSet is a result set of job rows as the server returns jobColumns.
func jobSet(jobs ...*spi.Job) fakeSet {
	set := fakeSet{Cols: jobColumnList}
	for _, j := range jobs {
		set.Rows = append(set.Rows, jobRow(j))
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
	var params, tags, wf, trace driver.Value
	if len(j.TraceContext) > 0 {
		trace = j.TraceContext
	}
	if j.WorkflowID != uuid.Nil {
		wf = j.WorkflowID[:]
	}
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
		result, isNull(j.Result), ns(j.ResultType), nb(j.IdempotencyKey), params, nb(j.Resource), int64(j.ResourceLimit),
		wf, int64(j.DependencyCount), int64(j.Waiting), int64(j.Dependents), trace, int64(j.Snoozes), tags,
	}
}

// deadlock is the error SQL Server returns to a deadlock victim.
var deadlock = mssql.Error{Number: errDeadlockVictim, Message: "Transaction (Process ID 57) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction."}

// fakeStore returns a store on f, without schema checks, that does not
// pause between retries.
func fakeStore(t *testing.T, f *fakeDB, opts Options) *Store {
	t.Helper()
	f.Check = func(q string, args []driver.NamedValue) { checkParams(t, q, len(args)) }
	s := wrap(f.Open(), opts, true)
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
