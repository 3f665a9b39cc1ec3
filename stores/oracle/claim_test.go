package oracle

import (
	"context"
	"database/sql/driver"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	go_ora "github.com/sijms/go-ora/v2"
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

var candidateCols = []string{"job_id", "priority", "scheduled_time", "resource_name", "resource_limit"}

// claimServer answers the claim's statements as a database holding
// pending would; jobs in lockedByOthers are skipped by SKIP LOCKED.
type claimServer struct {
	pending        map[uuid.UUID]*spi.Job
	claimed        map[uuid.UUID]*spi.Job
	lockedByOthers map[uuid.UUID]bool
	holders        map[string]int64
	resources      map[string]bool
	fail           map[string][]error // statement prefix -> errors to return, in turn
}

func newClaimServer(jobs ...*spi.Job) *claimServer {
	cs := &claimServer{pending: map[uuid.UUID]*spi.Job{}, claimed: map[uuid.UUID]*spi.Job{}, lockedByOthers: map[uuid.UUID]bool{},
		holders: map[string]int64{}, resources: map[string]bool{}, fail: map[string][]error{}}
	for _, j := range jobs {
		cs.pending[j.ID] = j
	}
	return cs
}

// claimTasks is the task list of the claims of these tests: the task of
// job.
var claimTasks = []string{"send-email"}

// TestClaimOfTasks checks the task filter: one range per task and level,
// the task a bind variable, and a claim without tasks first reads the
// distinct tasks of the pending jobs.
func TestClaimOfTasks(t *testing.T) {
	q, args := dialect.CandidatesSQL([]string{"a", "b"}, spi.TagFilter{}, t0, 5)
	assert.Equal(t, 2*spi.NumPriorities, strings.Count(q, "x.task_name = :"), q)
	assert.Equal(t, 2*spi.NumPriorities, strings.Count(q, "FETCH FIRST"), q)
	assert.Equal(t, "a", args[0])
	assert.NotContains(t, q, "'a'", "task names are never spliced into the text")

	j := job(spi.PriorityNormal, t0.Add(-time.Minute))
	srv := newClaimServer(j)
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Len(t, got, 1)
	assert.Equal(t, pendingTasksSQL, f.Log[1], "a claim without tasks reads the pending tasks first")
}

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
	case strings.Contains(q, "FETCH FIRST") && strings.Contains(q, "x.status = 'PENDING'"):
		set := fakeSet{Cols: candidateCols}
		for _, j := range cs.pending {
			var res driver.Value
			if j.Resource != "" {
				res = j.Resource
			}
			set.Rows = append(set.Rows, []driver.Value{j.ID[:], int64(j.Priority), j.ScheduledAt, res, int64(j.ResourceLimit)})
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasSuffix(q, "FOR UPDATE SKIP LOCKED"):
		set := fakeSet{Cols: []string{"job_id"}}
		for _, a := range args {
			id := uuid.UUID(a.Value.([]byte))
			if cs.pending[id] != nil && !cs.lockedByOthers[id] {
				set.Rows = append(set.Rows, []driver.Value{id[:]})
			}
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasPrefix(q, "SELECT resource_name FROM scheduler_resource"):
		name := args[0].Value.(string)
		set := fakeSet{Cols: []string{"resource_name"}}
		if cs.resources[name] {
			set.Rows = append(set.Rows, []driver.Value{name})
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasPrefix(q, "INSERT INTO scheduler_resource"):
		cs.resources[args[0].Value.(string)] = true
		return fakeResult{Affected: 1}, nil
	case strings.HasPrefix(q, "SELECT r.name"):
		set := fakeSet{Cols: []string{"name", "count"}}
		for _, a := range args {
			set.Rows = append(set.Rows, []driver.Value{a.Value.(string), cs.holders[a.Value.(string)]})
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasPrefix(q, "UPDATE scheduler_job SET status = 'RUNNING'"):
		node, now := args[0].Value.(string), argTime(args[1].Value)
		n := 0
		for _, a := range args[2:] {
			id := uuid.UUID(a.Value.([]byte))
			if j := cs.pending[id]; j != nil {
				delete(cs.pending, id)
				c := j.Clone()
				c.Status, c.OwnerNode, c.ClaimSeq, c.ClaimedAt = spi.StatusRunning, node, j.ClaimSeq+1, now
				cs.claimed[id] = c
				n++
			}
		}
		return fakeResult{Affected: int64(n)}, nil
	case strings.HasPrefix(q, "SELECT "+jobColumns):
		var jobs []*spi.Job
		for _, a := range args {
			if id, ok := a.Value.([]byte); ok {
				if j := cs.claimed[uuid.UUID(id)]; j != nil {
					jobs = append(jobs, j)
				}
			}
		}
		return fakeResult{Sets: []fakeSet{jobSet(jobs...)}}, nil
	}
	return fakeResult{}, nil
}

func claimIDs(jobs []*spi.Job) []uuid.UUID {
	out := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func TestClaimStatementsAndOrder(t *testing.T) {
	low := job(spi.PriorityLowest, t0.Add(-2*time.Hour))
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
	require.Len(t, stmts, 6, "%q", stmts)
	assert.Equal(t, "BEGIN", stmts[0])
	assert.Contains(t, f.Log[1], "FETCH FIRST :4 ROWS ONLY")
	assert.NotContains(t, f.Log[1], "FOR UPDATE", "Oracle refuses a row limit with FOR UPDATE")
	assert.True(t, strings.HasSuffix(f.Log[2], "AND status = 'PENDING' FOR UPDATE SKIP LOCKED"))
	assert.Equal(t, []any{low.ID[:], crit.ID[:], norm.ID[:]}, values(f.Args[2]), "the best three are locked, in claim order")
	assert.True(t, strings.HasPrefix(f.Log[3], "UPDATE scheduler_job SET status = 'RUNNING'"))
	assert.True(t, strings.HasPrefix(f.Log[4], "SELECT j.job_id"))
	assert.Equal(t, "COMMIT", stmts[5])
	assert.Contains(t, srv.pending, later.ID)
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

func TestClaimReplacesJobsOthersHold(t *testing.T) {
	a, b, c := job(spi.PriorityHigh, t0.Add(-3*time.Minute)), job(spi.PriorityHigh, t0.Add(-2*time.Minute)), job(spi.PriorityHigh, t0.Add(-time.Minute))
	srv := newClaimServer(a, b, c)
	srv.lockedByOthers[a.ID] = true
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 2, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{b.ID, c.ID}, claimIDs(got), "the job another session holds is replaced by the next best")
	var locks [][]any
	for i, q := range f.Log {
		if strings.HasSuffix(q, "FOR UPDATE SKIP LOCKED") {
			locks = append(locks, values(f.Args[i]))
		}
	}
	assert.Equal(t, [][]any{{a.ID[:], b.ID[:]}, {c.ID[:]}}, locks, "two lock rounds")
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
	stmts := f.Statements()
	assert.Equal(t, "ROLLBACK", stmts[4], "%q", stmts)
	assert.Equal(t, "COMMIT", stmts[len(stmts)-1])
	assert.Equal(t, 2, strings.Count(strings.Join(stmts, "\n"), "BEGIN"))
}

func TestClaimAdoptsJobsOfACommitWhoseOutcomeWasLost(t *testing.T) {
	a, b := job(spi.PriorityHigh, t0.Add(-time.Minute)), job(spi.PriorityLow, t0.Add(-time.Minute))
	srv := newClaimServer(a, b)
	f := &fakeDB{Handler: srv.handle, Commits: []error{driver.ErrBadConn}}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID, b.ID}, claimIDs(got), "the retry returns the jobs the lost commit claimed")
	stmts := f.Statements()
	require.Len(t, stmts, 9, "%q", stmts)
	assert.Equal(t, "COMMIT", stmts[5])
	assert.Equal(t, "BEGIN", stmts[6])
	assert.Contains(t, f.Log[7], "j.status = 'RUNNING' AND j.claimed_time = :1 AND j.job_id IN (:2, :3)", "the retry first adopts, and claims nothing new")
	assert.Equal(t, "COMMIT", stmts[8])
}

func TestClaimGivesUpAfterTheRetries(t *testing.T) {
	srv := newClaimServer(job(spi.PriorityHigh, t0))
	srv.fail["SELECT * FROM ("] = []error{deadlock, deadlock, deadlock}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{Retries: 2})
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.Error(t, err)
	assert.ErrorIs(t, err, sqlcore.ErrRetriesExhausted)
	assert.Contains(t, err.Error(), "ORA-00060")
	assert.Equal(t, 3, strings.Count(strings.Join(f.Statements(), "\n"), "BEGIN"))
}

// candidatesLine is the first line of the claim's candidates statement.
const candidatesLine = "SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit"

func TestClaimDoesNotRetryOtherErrors(t *testing.T) {
	srv := newClaimServer(job(spi.PriorityHigh, t0))
	srv.fail["SELECT * FROM ("] = []error{oraErr(942, "table or view does not exist")}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "oracle: claim jobs: ORA-00942")
	assert.Equal(t, []string{"BEGIN", candidatesLine, "ROLLBACK"}, f.Statements())
}

func TestClaimPermits(t *testing.T) {
	var jobs []*spi.Job
	for i := range 4 {
		j := job(spi.PriorityNormal, t0.Add(-time.Duration(10-i)*time.Minute))
		j.Resource, j.ResourceLimit = "gpu", 3
		jobs = append(jobs, j)
	}
	other := job(spi.PriorityNormal, t0.Add(-20*time.Minute))
	other.Resource, other.ResourceLimit = "api", 1
	plain := job(spi.PriorityLowest, t0.Add(-time.Minute))
	srv := newClaimServer(append(jobs, other, plain)...)
	srv.holders["gpu"] = 1
	srv.holders["api"] = 1 // full
	srv.resources["gpu"] = true
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 10, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{jobs[0].ID, jobs[1].ID, plain.ID}, claimIDs(got), "two of gpu in order, none of the full api, the plain job")
	var order []string
	for i, q := range f.Log {
		switch {
		case strings.HasPrefix(q, "SELECT resource_name FROM scheduler_resource"):
			order = append(order, "lock "+f.Args[i][0].Value.(string))
		case strings.HasPrefix(q, "INSERT INTO scheduler_resource"):
			order = append(order, "create "+f.Args[i][0].Value.(string))
		case strings.HasPrefix(q, "SELECT r.name"):
			order = append(order, "count")
		case strings.HasSuffix(q, "FOR UPDATE SKIP LOCKED"):
			order = append(order, "lock jobs")
		}
	}
	assert.Equal(t, []string{"lock api", "create api", "lock gpu", "count", "lock jobs"}, order,
		"resources locked in name order (created when missing) and counted before the jobs are locked")
}

func TestClaimWithTagsBindsThemPerLevel(t *testing.T) {
	srv := newClaimServer()
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	_, err := s.ClaimJobs(context.Background(), spi.ClaimParams{Tasks: claimTasks, NodeID: "n", Limit: 5, Now: t0,
		Tags: spi.TagFilter{All: []string{"gpu", "eu", "gpu"}, Any: []string{"a%"}, None: []string{"x'y"}}})
	require.NoError(t, err)
	args := values(f.Args[1])
	require.Len(t, args, 5*8)
	assert.Equal(t, []any{"send-email", go_ora.TimeStamp(t0), "send-email", "gpu", "eu", "a%", "x'y", int64(5)}, args[:8],
		"the task, now, the task (the paused tasks' probe), All (without repeats), Any, None, the limit")
	assert.Contains(t, f.Log[1], "IN (:4, :5)) = 2", "All's count of its distinct tags")
	assert.NotContains(t, f.Log[1], "gpu", "tags are never spliced into the text")
}

// completeServer answers completion statements from a table of jobs.
type completeServer struct {
	jobs map[uuid.UUID]*spi.Job
}

func (cs *completeServer) handle(q string, args []driver.NamedValue) (fakeResult, error) {
	switch {
	case strings.HasPrefix(q, "SELECT job_id, claim_seq FROM scheduler_job"):
		set := fakeSet{Cols: []string{"job_id", "claim_seq"}}
		for _, a := range args {
			if j := cs.jobs[uuid.UUID(a.Value.([]byte))]; j != nil && j.Status == spi.StatusRunning {
				set.Rows = append(set.Rows, []driver.Value{j.ID[:], j.ClaimSeq})
			}
		}
		return fakeResult{Sets: []fakeSet{set}}, nil
	case strings.HasPrefix(q, "BEGIN"):
		// Apply each fenced UPDATE of the block, reading "column = :n".
		for _, stmt := range strings.Split(q, ";") {
			if !strings.Contains(stmt, "UPDATE scheduler_job") {
				continue
			}
			set := map[string]driver.Value{}
			for _, m := range assignment.FindAllStringSubmatch(stmt, -1) {
				if m[2] == "EMPTY_BLOB()" {
					set[m[1]] = []byte{}
					continue
				}
				n, _ := strconv.Atoi(m[2][1:])
				set[m[1]] = args[n-1].Value
			}
			j := cs.jobs[uuid.UUID(set["job_id"].([]byte))]
			if j == nil || j.Status != spi.StatusRunning || j.ClaimSeq != set["claim_seq"].(int64) {
				continue
			}
			lastErr, _ := set["last_error"].(string)
			switch {
			case strings.Contains(stmt, "'SUCCEEDED'"):
				j.Status, j.FinishedAt = spi.StatusSucceeded, argTime(set["finished_time"])
				if b, ok := set["job_result"].([]byte); ok {
					j.Result = b
				}
			case strings.Contains(stmt, "'PENDING'"):
				j.Status, j.ScheduledAt, j.Attempts, j.OwnerNode, j.LastError = spi.StatusPending, argTime(set["scheduled_time"]), int(set["attempts"].(int64)), "", lastErr
			case strings.Contains(stmt, "'FAILED'"):
				j.Status, j.FinishedAt, j.Attempts, j.LastError = spi.StatusFailed, argTime(set["finished_time"]), int(set["attempts"].(int64)), lastErr
			}
		}
		return fakeResult{}, nil
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

// assignment matches "column = :n" (or EMPTY_BLOB()) in a statement.
var assignment = regexp.MustCompile(`(\w+) = (:[0-9]+|EMPTY_BLOB\(\))`)

// running returns j claimed by node with claim sequence 1.
func running(j *spi.Job, node string) *spi.Job {
	j.Status, j.OwnerNode, j.ClaimSeq, j.ClaimedAt = spi.StatusRunning, node, 1, t0
	return j
}

func TestCompleteLocksThenWritesOneBlock(t *testing.T) {
	a, b, c := running(job(spi.PriorityNormal, t0), "n"), running(job(spi.PriorityNormal, t0), "n"), running(job(spi.PriorityNormal, t0), "n")
	d := running(job(spi.PriorityNormal, t0), "n")
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{a.ID: a, b.ID: b, c.ID: c, d.ID: d}}
	f := &fakeDB{Handler: srv.handle}
	s := fakeStore(t, f, Options{})
	done := t0.Add(time.Minute)
	big := []byte(strings.Repeat("x", maxInlineRaw+1))
	cs := []spi.Completion{
		{ClaimRef: spi.ClaimRef{JobID: c.ID, ClaimSeq: 1}, Outcome: spi.OutcomeFailed, FinishedAt: done, Attempts: 4, LastError: "boom"},
		{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: done, Result: []byte{}, ResultType: "R"},
		{ClaimRef: spi.ClaimRef{JobID: b.ID, ClaimSeq: 2}, Outcome: spi.OutcomeSucceeded, FinishedAt: done}, // stale
		{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeFailed, FinishedAt: done},    // repeated claim
		{ClaimRef: spi.ClaimRef{JobID: b.ID, ClaimSeq: 1}, Outcome: spi.OutcomeRetry, FinishedAt: done, RetryAt: done.Add(time.Hour), Attempts: 1, LastError: "later"},
		{ClaimRef: spi.ClaimRef{JobID: d.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: done, Result: big},
	}
	got, err := s.CompleteJobs(context.Background(), cs)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, false, false, true, true}, got)
	stmts := f.Statements()
	require.Len(t, stmts, 5)
	assert.Equal(t, []string{"BEGIN", "SELECT job_id, claim_seq FROM scheduler_job", "BEGIN"}, stmts[:3])
	assert.True(t, strings.HasPrefix(stmts[3], "SELECT j.job_id, j.task_name"), "the stale entry's job is read back, to recognise a replayed completion: %s", stmts[3])
	assert.Equal(t, "COMMIT", stmts[4])
	block := f.Log[2]
	assert.Equal(t, 4, strings.Count(block, "UPDATE scheduler_job"), "one fenced UPDATE per current claim")
	assert.Equal(t, 4, strings.Count(block, "WHERE status = 'RUNNING' AND job_id"))
	assert.Contains(t, block, "job_result = EMPTY_BLOB()", "an empty result is EMPTY_BLOB(), not NULL")
	assert.True(t, strings.HasSuffix(block, "END;"))
	var blobs int
	for _, a := range f.Args[2] {
		if _, ok := a.Value.(go_ora.Blob); ok {
			blobs++
		}
	}
	assert.Equal(t, 1, blobs, "a result above 2,000 bytes is bound as a temporary LOB")
	assert.Equal(t, []byte{}, a.Result)
	assert.Equal(t, spi.StatusPending, b.Status)
	assert.Equal(t, spi.StatusFailed, c.Status)
	assert.Equal(t, spi.StatusSucceeded, d.Status)
}

func TestCompleteRetriesADeadlockAndRecognizesALostCommit(t *testing.T) {
	a := running(job(spi.PriorityNormal, t0), "n")
	srv := &completeServer{jobs: map[uuid.UUID]*spi.Job{a.ID: a}}
	f := &fakeDB{Commits: []error{driver.ErrBadConn}}
	calls := 0
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		if calls++; calls == 1 {
			return fakeResult{}, deadlock
		}
		return srv.handle(q, args)
	}
	s := fakeStore(t, f, Options{})
	got, err := s.CompleteJobs(context.Background(), []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: a.ID, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: []byte(`1`)}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, got, "applied by the commit whose answer was lost")
	stmts := f.Statements()
	assert.Equal(t, []string{"BEGIN", "SELECT job_id, claim_seq FROM scheduler_job", "ROLLBACK",
		"BEGIN", "SELECT job_id, claim_seq FROM scheduler_job", "BEGIN", "COMMIT",
		"BEGIN", "SELECT job_id, claim_seq FROM scheduler_job", "SELECT " + firstLine(jobColumns), "COMMIT"}, stmts)
}

func TestCompleteRefusesUnknownOutcomes(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	_, err := s.CompleteJobs(context.Background(), []spi.Completion{{Outcome: 9}})
	require.Error(t, err)
	assert.Empty(t, f.Statements())
}
