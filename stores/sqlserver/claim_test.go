package sqlserver

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
	"github.com/ratchet-go/ratchet/tck/storetest"
)

// The job helpers shared with the other stores' tests.
var (
	t0    = storetest.T0
	newID = storetest.NewID
	job   = storetest.Job
)

// candidateRow is a row of the claim's candidates query.
func candidateRow(j *spi.Job) []driver.Value {
	var res driver.Value
	if j.Resource != "" {
		res = []byte(j.Resource)
	}
	return []driver.Value{j.ID[:], int64(j.Priority), j.ScheduledAt, res, int64(j.ResourceLimit)}
}

var candidateCols = []string{"job_id", "priority", "scheduled_time", "resource_name", "resource_limit"}

// claimServer answers the claim's statements as a server holding pending
// would: candidates are the pending jobs (the test data are due), the
// UPDATE takes the named ones.
type claimServer struct {
	pending map[uuid.UUID]*spi.Job
	claimed map[uuid.UUID]*spi.Job
	holders map[string]int64
	fail    map[string][]error // statement prefix -> errors to return, in turn
}

func newClaimServer(jobs ...*spi.Job) *claimServer {
	cs := &claimServer{pending: map[uuid.UUID]*spi.Job{}, claimed: map[uuid.UUID]*spi.Job{}, holders: map[string]int64{}, fail: map[string][]error{}}
	for _, j := range jobs {
		cs.pending[j.ID] = j
	}
	return cs
}

// taskParam finds the parameter of each task in a candidates statement.
var taskParam = regexp.MustCompile(`x\.task_name = @p(\d+)`)

func (cs *claimServer) handle(q string, args []driver.NamedValue) (fakeResult, error) {
	for prefix, errs := range cs.fail {
		if strings.HasPrefix(strings.TrimSpace(q), prefix) && len(errs) > 0 {
			cs.fail[prefix] = errs[1:]
			if errs[0] != nil {
				return fakeResult{}, errs[0]
			}
		}
	}
	switch {
	case strings.Contains(q, "WITH (UPDLOCK, READPAST, ROWLOCK)"):
		var tasks []string // one scan per task and level
		for _, m := range taskParam.FindAllStringSubmatch(q, -1) {
			n, _ := strconv.Atoi(m[1])
			tasks = append(tasks, args[n-1].Value.(string))
		}
		set := fakeSet{Cols: candidateCols}
		for _, j := range cs.pending {
			if slices.Contains(tasks, j.TaskName) {
				set.Rows = append(set.Rows, candidateRow(j))
			}
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case q == pendingTasksSQL:
		set := fakeSet{Cols: []string{"task_name"}}
		seen := map[string]bool{}
		for _, j := range cs.pending {
			if !seen[j.TaskName] {
				seen[j.TaskName] = true
				set.Rows = append(set.Rows, []driver.Value{j.TaskName})
			}
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.Contains(q, "sp_getapplock"):
		n := (len(args) - 1) / 2
		set := fakeSet{Cols: []string{"n", "count"}}
		for _, a := range args[1+n:] {
			name := a.Value.([]byte)
			set.Rows = append(set.Rows, []driver.Value{name, cs.holders[string(name)]})
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasPrefix(q, "UPDATE scheduler_job SET status = 'RUNNING'"):
		node, now := string(args[0].Value.([]byte)), argTime(args[1].Value)
		ids := fakeSet{Cols: []string{"job_id"}}
		var jobs []*spi.Job
		for _, a := range args[2:] {
			id := uuid.UUID(a.Value.([]byte))
			j := cs.pending[id]
			if j == nil {
				continue
			}
			delete(cs.pending, id)
			c := j.Clone()
			c.Status, c.OwnerNode, c.ClaimSeq, c.ClaimedAt = spi.StatusRunning, node, j.ClaimSeq+1, now
			cs.claimed[id] = c
			ids.Rows = append(ids.Rows, []driver.Value{id[:]})
			jobs = append(jobs, c)
		}
		return fakeResult{Sets: []fakeSet{ids, jobSet(jobs...)}}, nil
	case strings.Contains(q, "AND j.claimed_time = @p1"): // adopt
		now := argTime(args[0].Value)
		var jobs []*spi.Job
		for _, a := range args[1:] {
			if j := cs.claimed[uuid.UUID(a.Value.([]byte))]; j != nil && j.ClaimedAt.Equal(now) {
				jobs = append(jobs, j)
			}
		}
		return fakeResult{Sets: []fakeSet{jobSet(jobs...)}}, nil
	}
	return fakeResult{}, nil
}

// claimTasks is the task list of the claims of these tests: the task of
// job.
var claimTasks = []string{"send-email"}

// TestClaimOfTasks checks the task filter: the candidates statement reads
// the tasks from a JSON array (@p3), and a claim without tasks first reads
// the distinct tasks of the pending jobs.
func TestClaimOfTasks(t *testing.T) {
	mine := job(spi.PriorityNormal, t0.Add(-time.Minute))
	other := job(spi.PriorityCritical, t0.Add(-time.Hour))
	other.TaskName = "other"
	srv := newClaimServer(mine, other)
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: "n", Limit: 5, Now: t0, Tasks: []string{"send-email", "send-email", "missing"}})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{mine.ID}, claimIDs(got), "only the job of a listed task")
	assert.Equal(t, "BEGIN", f.Statements()[0])
	var tasks []any
	for _, m := range taskParam.FindAllStringSubmatch(f.Log[1], -1) {
		n, _ := strconv.Atoi(m[1])
		tasks = append(tasks, f.Args[1][n-1].Value)
	}
	assert.Equal(t, append(slices.Repeat([]any{"missing"}, 5), slices.Repeat([]any{"send-email"}, 5)...), tasks,
		"a scan per task and level, the tasks sorted and without repeats, as parameters")

	f2 := &fakeDB{Handler: srv.handle}
	s2 := fakeStore(t, f2, Options{})
	got, err = s2.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{other.ID}, claimIDs(got), "a claim without tasks takes the job of any task")
	assert.Equal(t, pendingTasksSQL, f2.Log[1])
}

func claimIDs(jobs []*spi.Job) []uuid.UUID {
	out := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func TestClaimStatementsAndOrder(t *testing.T) {
	low := job(spi.PriorityLowest, t0.Add(-2*time.Hour)) // aged by 8 levels at a 15-minute boost
	crit := job(spi.PriorityCritical, t0.Add(-time.Minute))
	norm := job(spi.PriorityNormal, t0.Add(-time.Minute))
	later := job(spi.PriorityNormal, t0.Add(-30*time.Second))
	srv := newClaimServer(low, crit, norm, later)
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})

	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "node-a", Limit: 3, Now: t0, BoostInterval: 15 * time.Minute})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{low.ID, crit.ID, norm.ID}, claimIDs(got), "exact aging order; the fourth job is left")
	for _, j := range got {
		assert.Equal(t, spi.StatusRunning, j.Status)
		assert.Equal(t, "node-a", j.OwnerNode)
		assert.Equal(t, int64(1), j.ClaimSeq)
		assert.Equal(t, t0, j.ClaimedAt)
	}
	stmts := f.Statements()
	require.Len(t, stmts, 4, "%q", stmts)
	assert.Equal(t, "BEGIN", stmts[0])
	assert.Contains(t, f.Log[1], "WITH (UPDLOCK, READPAST, ROWLOCK)")
	assert.Contains(t, f.Log[2], "OUTPUT inserted.job_id")
	assert.Equal(t, "COMMIT", stmts[3])
	// The UPDATE names the picked jobs in claim order, after node and now.
	upd := f.Args[2]
	require.Len(t, upd, 5)
	assert.Equal(t, []byte("node-a"), upd[0].Value)
	assert.Equal(t, t0, argTime(upd[1].Value))
	assert.Equal(t, low.ID[:], upd[2].Value)
	assert.Contains(t, srv.pending, later.ID)
}

func TestClaimRetriesADeadlockWithoutLosingJobs(t *testing.T) {
	a, b := job(spi.PriorityHigh, t0.Add(-time.Minute)), job(spi.PriorityLow, t0.Add(-time.Minute))
	srv := newClaimServer(a, b)
	srv.fail["UPDATE scheduler_job SET status = 'RUNNING'"] = []error{deadlock}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})

	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID, b.ID}, claimIDs(got))
	assert.Equal(t, []string{"BEGIN", candidatesLine, "UPDATE scheduler_job SET status = 'RUNNING', owner_node = @p1, claim_seq = claim_seq + 1, claimed_time = @p2", "ROLLBACK",
		"BEGIN", candidatesLine, "UPDATE scheduler_job SET status = 'RUNNING', owner_node = @p1, claim_seq = claim_seq + 1, claimed_time = @p2", "COMMIT"}, f.Statements())
}

func TestClaimAdoptsJobsOfACommitWhoseOutcomeWasLost(t *testing.T) {
	a, b := job(spi.PriorityHigh, t0.Add(-time.Minute)), job(spi.PriorityLow, t0.Add(-time.Minute))
	srv := newClaimServer(a, b)
	// The commit took effect on the server, but the connection broke before
	// the answer came back.
	f := &fakeDB{Handler: srv.handle, Commits: []error{driver.ErrBadConn}}
	s := fakeStore(t, f, Options{})

	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID, b.ID}, claimIDs(got), "the retry returns the jobs the lost commit claimed")
	stmts := f.Statements()
	require.Len(t, stmts, 7, "%q", stmts)
	assert.Equal(t, []string{"BEGIN", "COMMIT", "BEGIN", "COMMIT"}, []string{stmts[0], stmts[3], stmts[4], stmts[6]})
	assert.Contains(t, f.Log[5], "AND j.claimed_time = @p1", "the retry first adopts, and claims nothing new")
	assert.Empty(t, srv.pending)
}

func TestClaimAfterALostCommitThatDidNotApply(t *testing.T) {
	a := job(spi.PriorityHigh, t0.Add(-time.Minute))
	srv := newClaimServer(a)
	f := &fakeDB{Commits: []error{driver.ErrBadConn}}
	first := true
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		res, err := srv.handle(q, args)
		if first && strings.HasPrefix(q, "UPDATE scheduler_job SET status = 'RUNNING'") {
			// The server rolled this transaction back when the connection
			// broke: undo the claim.
			first = false
			for id, j := range srv.claimed {
				delete(srv.claimed, id)
				srv.pending[id] = a
				_ = j
			}
		}
		return res, err
	}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID}, claimIDs(got), "nothing to adopt: the job is claimed afresh")
	stmts := f.Statements()
	assert.Equal(t, "COMMIT", stmts[len(stmts)-1])
	assert.Contains(t, strings.Join(f.Log, "\n"), "AND j.claimed_time = @p1")
	assert.Contains(t, srv.claimed, a.ID)
}

func TestClaimGivesUpAfterTheRetries(t *testing.T) {
	srv := newClaimServer(job(spi.PriorityHigh, t0))
	srv.fail["SELECT * FROM (SELECT TOP"] = []error{deadlock, deadlock, deadlock}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{Retries: 2})
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.Error(t, err)
	assert.ErrorIs(t, err, sqlcore.ErrRetriesExhausted)
	var me mssql.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, int32(1205), me.Number)
	assert.Equal(t, 3, strings.Count(strings.Join(f.Statements(), "\n"), "BEGIN"), "one run and two retries")
	assert.Len(t, srv.pending, 1, "the job is still pending")
}

// candidatesLine is the first line of the claim's candidates statement.
const candidatesLine = "SELECT * FROM (SELECT TOP (@p1) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit"

func TestClaimDoesNotRetryOtherErrors(t *testing.T) {
	srv := newClaimServer(job(spi.PriorityHigh, t0))
	srv.fail["SELECT * FROM (SELECT TOP"] = []error{mssql.Error{Number: 208, Message: "Invalid object name 'scheduler_job'."}}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sqlserver: claim jobs: mssql: Invalid object name")
	assert.Equal(t, []string{"BEGIN", candidatesLine, "ROLLBACK"}, f.Statements())
}

func TestClaimPermits(t *testing.T) {
	var jobs []*spi.Job
	for i := range 4 {
		j := job(spi.PriorityNormal, t0.Add(-time.Duration(10-i)*time.Minute))
		j.Resource, j.ResourceLimit = "gpu", 3
		jobs = append(jobs, j)
	}
	plain := job(spi.PriorityLowest, t0.Add(-time.Minute))
	srv := newClaimServer(append(jobs, plain)...)
	srv.holders["gpu"] = 1 // one RUNNING holder already: two permits free
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{LockTimeout: 2 * time.Second})

	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 10, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{jobs[0].ID, jobs[1].ID, plain.ID}, claimIDs(got), "two of the resource in order, then the plain job")
	var permits int
	for i, q := range f.Log {
		if strings.Contains(q, "sp_getapplock") {
			permits = i
		}
	}
	require.NotZero(t, permits, "the claim takes the resource's application lock")
	q := f.Log[permits]
	assert.Contains(t, q, "@LockOwner = 'Transaction'")
	assert.Contains(t, q, "IF @rc < 0 THROW 51000")
	args := f.Args[permits]
	assert.Equal(t, int64(2000), args[0].Value, "lock timeout in milliseconds")
	assert.Equal(t, permitLockName("gpu"), args[1].Value)
	assert.Equal(t, []byte("gpu"), args[2].Value)
}

func TestClaimWithTagsPassesThemAsParameters(t *testing.T) {
	srv := newClaimServer()
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0,
		Tags: spi.TagFilter{All: []string{"gpu", "eu", "gpu"}, Any: []string{"a%"}, None: []string{"x'y"}}})
	require.NoError(t, err)
	require.Len(t, f.Args, 3) // BEGIN, candidates, COMMIT
	args := f.Args[1]
	var vals []any
	assert.Equal(t, "send-email", args[3].Value, "the task, for the probe of the paused tasks")
	for _, a := range args[4:8] {
		vals = append(vals, a.Value)
	}
	assert.Equal(t, []any{[]byte("gpu"), []byte("eu"), []byte("a%"), []byte("x'y")}, vals, "All deduplicated (in the order given), then Any, then None")
	assert.Contains(t, f.Log[1], "IN (@p5, @p6)) = 2", "All's count of its distinct tags")
	assert.Len(t, args, 5*8)
	assert.NotContains(t, f.Log[1], "gpu", "tags are never spliced into the text")
}

func TestClaimLimitZeroDoesNothing(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 0, Now: t0})
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Empty(t, f.Statements())
}

func TestClaimFailsCorruptRows(t *testing.T) {
	good := job(spi.PriorityHigh, t0.Add(-time.Minute))
	bad := job(spi.PriorityHigh, t0.Add(-2*time.Minute))
	bad.Params = map[string]string{"x": "y"}
	srv := newClaimServer(good, bad)
	f := &fakeDB{}
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		res, err := srv.handle(q, args)
		if strings.HasPrefix(q, "UPDATE scheduler_job SET status = 'RUNNING'") {
			for _, row := range res.Sets[1].Rows {
				if uuid.UUID(row[0].([]byte)) == bad.ID {
					row[22] = "{not json"
				}
			}
		}
		return res, err
	}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{good.ID}, claimIDs(got))
	i := len(f.Log) - 2
	assert.True(t, strings.HasPrefix(f.Log[i], "UPDATE scheduler_job SET status = 'FAILED'"), f.Log[i])
	assert.Contains(t, f.Args[i][0].Value, "ratchet: corrupt job row")
	assert.Equal(t, bad.ID[:], f.Args[i][2].Value)
	assert.Equal(t, int64(1), f.Args[i][3].Value, "fenced by the claim that took it")
}

// completeServer answers completion statements from a table of jobs.
type completeServer struct {
	jobs map[uuid.UUID]*spi.Job
}

func (cs *completeServer) handle(q string, args []driver.NamedValue) (fakeResult, error) {
	switch {
	case strings.HasPrefix(q, "UPDATE j SET\n\t\tj.status = v.st"):
		set := fakeSet{Cols: []string{"i"}}
		for r := 0; r < len(args); r += numCompleteArgs {
			row := args[r : r+numCompleteArgs]
			j := cs.jobs[uuid.UUID(row[1].Value.([]byte))]
			if j == nil || j.Status != spi.StatusRunning || j.ClaimSeq != row[2].Value.(int64) {
				continue
			}
			switch st := spi.Status(row[3].Value.(string)); st {
			case spi.StatusSucceeded:
				j.Status, j.FinishedAt, j.Result = st, argTime(row[4].Value), row[8].Value.([]byte)
			case spi.StatusPending:
				j.Status, j.ScheduledAt, j.Attempts, j.OwnerNode = st, argTime(row[5].Value), int(row[6].Value.(int64)), ""
				j.LastError, _ = row[7].Value.(string)
			case spi.StatusFailed:
				j.Status, j.FinishedAt, j.Attempts = st, argTime(row[4].Value), int(row[6].Value.(int64))
				j.LastError, _ = row[7].Value.(string)
			}
			set.Rows = append(set.Rows, []driver.Value{row[0].Value})
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasPrefix(q, "SELECT "+jobColumns):
		var jobs []*spi.Job
		for _, a := range args {
			if j := cs.jobs[uuid.UUID(a.Value.([]byte))]; j != nil {
				jobs = append(jobs, j)
			}
		}
		return fakeResult{Sets: []fakeSet{jobSet(jobs...)}}, nil
	}
	return fakeResult{}, nil
}

// running returns j claimed by node with claim sequence 1.
func running(j *spi.Job, node string) *spi.Job {
	j.Status, j.OwnerNode, j.ClaimSeq, j.ClaimedAt = spi.StatusRunning, node, 1, t0
	return j
}

func TestCompleteOneStatementPerBatch(t *testing.T) {
	a, b, c := running(job(spi.PriorityNormal, t0), "n"), running(job(spi.PriorityNormal, t0), "n"), running(job(spi.PriorityNormal, t0), "n")
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{a.ID: a, b.ID: b, c.ID: c}}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	done := t0.Add(time.Minute)
	cs := []spi.Completion{
		{ClaimRef: spi.ClaimRef{JobID: c.ID, ClaimSeq: 1}, Outcome: spi.OutcomeFailed, FinishedAt: done, Attempts: 4, LastError: "boom"},
		{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: done, Result: []byte(`{"ok":true}`), ResultType: "R"},
		{ClaimRef: spi.ClaimRef{JobID: b.ID, ClaimSeq: 2}, Outcome: spi.OutcomeSucceeded, FinishedAt: done}, // stale
		{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeFailed, FinishedAt: done},    // repeated claim
		{ClaimRef: spi.ClaimRef{JobID: b.ID, ClaimSeq: 1}, Outcome: spi.OutcomeRetry, FinishedAt: done, RetryAt: done.Add(time.Hour), Attempts: 1, LastError: "later"},
	}
	got, err := s.CompleteJobs(context.Background(), cs)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, false, false, true}, got)
	stmts := f.Statements()
	require.Len(t, stmts, 4)
	assert.Equal(t, []string{"BEGIN", "UPDATE j SET"}, stmts[:2])
	assert.True(t, strings.HasPrefix(stmts[2], "SELECT j.job_id, j.task_name"), "the stale entry's job is read back, to recognise a replayed completion: %s", stmts[2])
	assert.Equal(t, "COMMIT", stmts[3])
	assert.Contains(t, f.Log[1], "OUTPUT v.i")
	assert.Contains(t, f.Log[1], "WHERE j.claim_seq = v.seq AND j.status = 'RUNNING'")
	args := f.Args[1]
	require.Len(t, args, 4*numCompleteArgs, "the repeated claim is sent once")
	ids := []any{args[1].Value, args[11].Value, args[21].Value, args[31].Value}
	assert.Equal(t, []any{a.ID[:], b.ID[:], b.ID[:], c.ID[:]}, ids, "rows in job id order")
	assert.Equal(t, spi.StatusSucceeded, a.Status)
	assert.Equal(t, []byte(`{"ok":true}`), a.Result)
	assert.Equal(t, spi.StatusPending, b.Status)
	assert.Equal(t, done.Add(time.Hour), b.ScheduledAt)
	assert.Equal(t, spi.StatusFailed, c.Status)
	assert.Equal(t, "boom", c.LastError)
	// A success carries a typed VARBINARY NULL for a nil result, so that
	// the VALUES column stays VARBINARY.
	for r := 0; r < len(args); r += numCompleteArgs {
		_, isBytes := args[r+8].Value.([]byte)
		assert.True(t, isBytes || args[r+8].Value == nil, "result argument of row %d is %T", r/numCompleteArgs, args[r+8].Value)
	}
}

func TestCompleteRetriesADeadlock(t *testing.T) {
	a := running(job(spi.PriorityNormal, t0), "n")
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{a.ID: a}}
	f := &fakeDB{}
	calls := 0
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		if calls++; calls == 1 {
			return fakeResult{}, deadlock
		}
		return srv.handle(q, args)
	}
	s := fakeStore(t, f, Options{})
	got, err := s.CompleteJobs(context.Background(), []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, got)
	assert.Equal(t, []string{"BEGIN", "UPDATE j SET", "ROLLBACK", "BEGIN", "UPDATE j SET", "COMMIT"}, f.Statements())
}

func TestCompleteRecognizesItsOwnLostCommit(t *testing.T) {
	a, b := running(job(spi.PriorityNormal, t0), "n"), running(job(spi.PriorityNormal, t0), "n")
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{a.ID: a, b.ID: b}}
	f := &fakeDB{Handler: srv.handle, Commits: []error{driver.ErrBadConn}}
	s := fakeStore(t, f, Options{})
	done := t0.Add(time.Minute)
	got, err := s.CompleteJobs(context.Background(), []spi.Completion{
		{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: done, Result: []byte(`1`)},
		{ClaimRef: spi.ClaimRef{JobID: b.ID, ClaimSeq: 1}, Outcome: spi.OutcomeRetry, FinishedAt: done, RetryAt: done, Attempts: 1, LastError: "e"},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, got, "the completions applied by the lost commit are reported as applied")
	assert.Equal(t, []string{"BEGIN", "UPDATE j SET", "COMMIT", "BEGIN", "UPDATE j SET", "SELECT " + firstLine(jobColumns), "COMMIT"}, f.Statements())
}

func TestCompleteSupersededAfterALostCommitStaysFalse(t *testing.T) {
	a := running(job(spi.PriorityNormal, t0), "n")
	a.ClaimSeq = 5 // another claim holds it
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{a.ID: a}}
	f := &fakeDB{Handler: srv.handle, Commits: []error{driver.ErrBadConn}}
	s := fakeStore(t, f, Options{})
	got, err := s.CompleteJobs(context.Background(), []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []bool{false}, got)
}

func TestCompleteRefusesUnknownOutcomes(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	_, err := s.CompleteJobs(context.Background(), []spi.Completion{{Outcome: 9}})
	require.Error(t, err)
	assert.Empty(t, f.Statements(), "nothing is sent")
}

func TestCompleteLargeBatchesAreChunked(t *testing.T) {
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{}}
	var cs []spi.Completion
	for range rowsPerComplet + 5 {
		j := running(job(spi.PriorityNormal, t0), "n")
		srv.jobs[j.ID] = j
		cs = append(cs, spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0})
	}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	got, err := s.CompleteJobs(context.Background(), cs)
	require.NoError(t, err)
	for i, ok := range got {
		require.True(t, ok, "completion %d", i)
	}
	assert.Equal(t, []string{"BEGIN", "UPDATE j SET", "UPDATE j SET", "COMMIT"}, f.Statements())
	for _, a := range f.Args[1:3] {
		assert.LessOrEqual(t, len(a), maxParams)
	}
}

func TestRetryStopsWhenTheContextEnds(t *testing.T) {
	f := &fakeDB{Handler: func(string, []driver.NamedValue) (fakeResult, error) { return fakeResult{}, deadlock }}
	s := fakeStore(t, f, Options{Retries: 5})
	ctx, cancel := context.WithCancel(context.Background())
	s.pause = func(int) time.Duration { cancel(); return time.Hour }
	_, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: newID(), ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// TestClaimOfManyTasksStaysUnderTheParameterLimit claims 300 tasks with a
// tag filter of 20 tags: the candidates are read by several statements,
// each binding at most the 2,100 parameters SQL Server takes, and every
// task is scanned once per level.
func TestClaimOfManyTasksStaysUnderTheParameterLimit(t *testing.T) {
	srv := newClaimServer()
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	var tasks, tags []string
	for i := range 300 {
		tasks = append(tasks, fmt.Sprintf("task-%03d", i))
	}
	for i := range 20 {
		tags = append(tags, fmt.Sprintf("tag-%02d", i))
	}
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: tasks, NodeID: "n", Limit: 5, Now: t0,
		Tags: spi.TagFilter{All: tags[:10], None: tags[10:]}})
	require.NoError(t, err)
	scanned, statements := 0, 0
	for i, q := range f.Log {
		if strings.HasPrefix(q, "SELECT * FROM (SELECT TOP") {
			statements++
			scanned += len(taskParam.FindAllString(q, -1))
			assert.LessOrEqual(t, len(f.Args[i]), maxParams)
		}
	}
	assert.Equal(t, 300*spi.NumPriorities, scanned)
	assert.Greater(t, statements, 1)
}
