package oracle

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	go_ora "github.com/sijms/go-ora/v2"
	"github.com/sijms/go-ora/v2/network"

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

// jobSet is a result set of job rows as the server returns jobColumns.
func jobSet(jobs ...*spi.Job) fakeSet {
	set := fakeSet{Cols: jobColumnList}
	for _, j := range jobs {
		set.Rows = append(set.Rows, jobRow(j))
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
		result, isNull(j.Result), ns(j.ResultType), ns(j.IdempotencyKey), params, ns(j.Resource), int64(j.ResourceLimit),
		wf, int64(j.DependencyCount), int64(j.Waiting), int64(j.Dependents), trace, int64(j.Snoozes), tags,
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
	f.Check = func(q string, args []driver.NamedValue) { checkParams(t, q, len(args)) }
	s := wrap(f.Open(), opts, true)
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
