package sqlcore_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func id(n byte) uuid.UUID { return uuid.UUID{15: n} }

func TestRankAgesAndBreaksTies(t *testing.T) {
	cands := []sqlcore.Candidate{
		{ID: id(1), Priority: spi.PriorityHigh, Scheduled: t0},
		{ID: id(2), Priority: spi.PriorityLow, Scheduled: t0.Add(-time.Hour)}, // 1 + 4 boosts = 5
		{ID: id(4), Priority: spi.PriorityHigh, Scheduled: t0},
		{ID: id(3), Priority: spi.PriorityHigh, Scheduled: t0},
		{ID: id(5), Priority: spi.PriorityHigh, Scheduled: t0.Add(-time.Minute)},
	}
	sqlcore.Rank(cands, t0, 15*time.Minute)
	assert.Equal(t, []uuid.UUID{id(2), id(5), id(1), id(3), id(4)}, sqlcore.IDs(cands))
	sqlcore.Rank(cands, t0, 0) // aging off
	assert.Equal(t, []uuid.UUID{id(5), id(1), id(3), id(4), id(2)}, sqlcore.IDs(cands))
}

func TestAdmitCountsPermitsTakenByTheClaim(t *testing.T) {
	cands := []sqlcore.Candidate{
		{ID: id(1), Resource: "db", Limit: 2},
		{ID: id(2), Resource: "db", Limit: 2},
		{ID: id(3)},
		{ID: id(4), Resource: "api", Limit: 1},
		{ID: id(5)},
	}
	assert.Equal(t, []string{"api", "db"}, sqlcore.Resources(cands, 2), "resources further down too, sorted")
	assert.Nil(t, sqlcore.Resources(cands[2:3], 1))
	held := map[string]int64{"db": 1, "api": 1}
	got := sqlcore.Admit(cands, 3, held)
	assert.Equal(t, []uuid.UUID{id(1), id(3), id(5)}, sqlcore.IDs(got), "one db permit left, api full: skipped, not waited for")
	assert.Equal(t, int64(2), held["db"])
}

func TestSortClaimed(t *testing.T) {
	jobs := []*spi.Job{
		{ID: id(2), Priority: spi.PriorityNormal, ScheduledAt: t0},
		{ID: id(1), Priority: spi.PriorityNormal, ScheduledAt: t0},
		{ID: id(3), Priority: spi.PriorityCritical, ScheduledAt: t0},
	}
	sqlcore.SortClaimed(jobs, t0, 15*time.Minute)
	assert.Equal(t, []uuid.UUID{id(3), id(1), id(2)}, []uuid.UUID{jobs[0].ID, jobs[1].ID, jobs[2].ID})
}

func TestFencing(t *testing.T) {
	refs := []spi.ClaimRef{{JobID: id(3), ClaimSeq: 1}, {JobID: id(1), ClaimSeq: 2}, {JobID: id(3), ClaimSeq: 1}, {JobID: id(2), ClaimSeq: 5}, {JobID: id(1), ClaimSeq: 1}}
	assert.Equal(t, []int{1, 4, 3, 0}, sqlcore.FirstOfEach(refs), "first of each claim, by job id")
	assert.Equal(t, []uuid.UUID{id(1), id(2), id(3)}, sqlcore.DistinctIDs(refs))
	cur := map[uuid.UUID]int64{id(1): 2, id(3): 1} // job 2 is not RUNNING
	assert.Equal(t, []int{0, 1}, sqlcore.Fenced(refs, cur), "current claims apply once; stale and repeated ones do not")
	cs := []spi.Completion{{ClaimRef: refs[0], Outcome: spi.OutcomeSucceeded}, {ClaimRef: refs[1], Outcome: 9}}
	assert.Equal(t, refs[:2], sqlcore.Refs(cs))
	var oe *sqlcore.OutcomeError
	require.ErrorAs(t, sqlcore.ValidOutcomes(cs), &oe)
	assert.Equal(t, id(1), oe.JobID)
	assert.ErrorContains(t, oe, "unknown outcome 9")
	assert.NoError(t, sqlcore.ValidOutcomes(cs[:1]))
}

func TestRecognizeAppliedCompletions(t *testing.T) {
	ref := func(n byte) spi.ClaimRef { return spi.ClaimRef{JobID: id(n), ClaimSeq: 3} }
	fin := t0.Add(1500 * time.Nanosecond)
	cs := []spi.Completion{
		{ClaimRef: ref(1), Outcome: spi.OutcomeSucceeded, FinishedAt: fin, Result: []byte(`"x"`)},
		{ClaimRef: ref(2), Outcome: spi.OutcomeRetry, RetryAt: t0.Add(time.Minute), Attempts: 2, LastError: "boom"},
		{ClaimRef: ref(3), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 4, LastError: "dead"},
		{ClaimRef: ref(4), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: ref(5), Outcome: spi.OutcomeRetry, RetryAt: t0.Add(time.Minute), Attempts: 2, LastError: "boom"},
		{ClaimRef: ref(6), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: ref(1), Outcome: spi.OutcomeSucceeded, FinishedAt: fin, Result: []byte(`"x"`)},
	}
	stored := []*spi.Job{
		{ID: id(1), ClaimSeq: 3, Status: spi.StatusSucceeded, FinishedAt: t0.Add(time.Microsecond), Result: []byte(`"x"`)},
		{ID: id(2), ClaimSeq: 3, Status: spi.StatusPending, ScheduledAt: t0.Add(time.Minute), Attempts: 2, LastError: "boom"},
		{ID: id(3), ClaimSeq: 3, Status: spi.StatusFailed, FinishedAt: t0, Attempts: 4, LastError: "dead"},
		{ID: id(4), ClaimSeq: 4, Status: spi.StatusSucceeded, FinishedAt: t0}, // claimed again since
		{ID: id(5), ClaimSeq: 3, Status: spi.StatusPending, ScheduledAt: t0.Add(time.Minute), Attempts: 1, LastError: "boom"},
		// job 6 is gone
	}
	out := make([]bool, len(cs))
	pos := sqlcore.FirstOfEach(sqlcore.Refs(cs))
	var asked []uuid.UUID
	require.NoError(t, sqlcore.Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) {
		asked = ids
		return stored, nil
	}))
	assert.Equal(t, []bool{true, true, true, false, false, false, false}, out,
		"exact replays count as applied, at microsecond precision; another claim, other values, a missing job and a repeat within the batch do not")
	assert.Len(t, asked, 6)

	out = []bool{true, true, true, true, true, true, false}
	called := false
	require.NoError(t, sqlcore.Recognize(cs, pos, out, func([]uuid.UUID) ([]*spi.Job, error) { called = true; return nil, nil }))
	assert.False(t, called, "nothing to recognise: no read")
	assert.ErrorContains(t, sqlcore.Recognize(cs, pos, make([]bool, len(cs)), func([]uuid.UUID) ([]*spi.Job, error) { return nil, errors.New("gone") }), "gone")
}

func TestRowJob(t *testing.T) {
	good := sqlcore.Row{ID: id(1), Task: "t", Status: "PENDING", Priority: 2,
		Scheduled: t0, BackoffParamUS: 1500, Params: sql.NullString{String: `{"k":"v"}`, Valid: true}, Tags: []string{"a"}}
	j, err := good.Job()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, j.Params)
	assert.Equal(t, 1500*time.Microsecond, j.BackoffParam)
	assert.Equal(t, []string{"a"}, j.Tags)
	for name, mutate := range map[string]func(r *sqlcore.Row){
		"unknown status":    func(r *sqlcore.Row) { r.Status = "LOST" },
		"out of range":      func(r *sqlcore.Row) { r.Priority = 9 },
		"not a JSON object": func(r *sqlcore.Row) { r.Params.String = "{not json" },
	} {
		r := good
		mutate(&r)
		_, err := r.Job()
		assert.ErrorIs(t, err, spi.ErrCorruptJob, name)
		assert.ErrorContains(t, err, name)
		assert.ErrorContains(t, err, r.ID.String(), "the message names the job")
	}
	assert.Nil(t, sqlcore.Blob(nil, true))
	assert.Equal(t, []byte{}, sqlcore.Blob(nil, false))
}

func TestRetry(t *testing.T) {
	transient := errors.New("deadlock")
	ctx := context.Background()
	runs, retries := 0, 0
	r := sqlcore.Retry{Retries: 3, Retryable: func(err error) bool { return errors.Is(err, transient) }, OnRetry: func() { retries++ }}
	err := r.Do(ctx, func(n int) error {
		runs++
		assert.Equal(t, runs, n)
		if n < 3 {
			return transient
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, runs)
	assert.Equal(t, 2, retries)

	err = r.Do(ctx, func(int) error { return transient })
	assert.ErrorIs(t, err, sqlcore.ErrRetriesExhausted)
	assert.ErrorIs(t, err, transient)
	assert.ErrorContains(t, err, "after 4 attempts")

	runs = 0
	permanent := errors.New("syntax")
	assert.Equal(t, permanent, r.Do(ctx, func(int) error { runs++; return permanent }))
	assert.Equal(t, 1, runs, "a permanent error ends at once")

	assert.Equal(t, transient, sqlcore.Retry{Retryable: r.Retryable}.Do(ctx, func(int) error { return transient }), "no retries: the error as it is")

	cctx, cancel := context.WithCancel(ctx)
	slow := sqlcore.Retry{Retries: 5, Retryable: r.Retryable, Pause: sqlcore.Doubling(time.Hour, time.Hour)}
	runs = 0
	err = slow.Do(cctx, func(int) error { runs++; cancel(); return transient })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, runs)

	d := sqlcore.Doubling(10*time.Millisecond, 50*time.Millisecond)
	assert.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond}, []time.Duration{d(1), d(2), d(3), d(4)})
}

// fakeRows is a Cursor over n rows, failing with err after them.
type fakeRows struct {
	n, at int
	err   error
}

func (r *fakeRows) Next() bool { r.at++; return r.at <= r.n }
func (r *fakeRows) Err() error { return r.err }

func TestReadOneAndPage(t *testing.T) {
	decode := func(r *fakeRows) func() (*spi.Job, error) {
		return func() (*spi.Job, error) { return &spi.Job{ID: id(byte(r.at))}, nil }
	}
	r := &fakeRows{n: 1}
	j, err := sqlcore.ReadOne(r, id(1), decode(r))
	require.NoError(t, err)
	assert.Equal(t, id(1), j.ID)
	_, err = sqlcore.ReadOne(&fakeRows{}, id(9), nil)
	assert.ErrorIs(t, err, spi.ErrNotFound)
	assert.ErrorContains(t, err, id(9).String())
	boom := errors.New("boom")
	_, err = sqlcore.ReadOne(&fakeRows{err: boom}, id(9), nil)
	assert.ErrorIs(t, err, boom)

	assert.Equal(t, 100, sqlcore.PageSize(spi.ListParams{}))
	assert.Equal(t, 7, sqlcore.PageSize(spi.ListParams{Limit: 7}))
	r = &fakeRows{n: 4} // the query asked for limit+1 = 4 rows
	jobs, next, err := sqlcore.ReadPage(r, 3, decode(r))
	require.NoError(t, err)
	assert.Len(t, jobs, 3)
	assert.Equal(t, id(3), next, "more follow: the cursor is the last listed id")
	r = &fakeRows{n: 2}
	jobs, next, err = sqlcore.ReadPage(r, 3, decode(r))
	require.NoError(t, err)
	assert.Len(t, jobs, 2)
	assert.Equal(t, uuid.Nil, next, "the last page")
	corrupt := errors.New("corrupt")
	_, _, err = sqlcore.ReadPage(&fakeRows{n: 2}, 3, func() (*spi.Job, error) { return nil, corrupt })
	assert.ErrorIs(t, err, corrupt)
	_, _, err = sqlcore.ReadPage(&fakeRows{err: boom}, 3, nil)
	assert.ErrorIs(t, err, boom)
}

func TestGate(t *testing.T) {
	var g sqlcore.Gate
	done, err := g.Enter()
	require.NoError(t, err)
	closed := make(chan bool)
	go func() {
		first, err := g.Close(func() error { return errors.New("released") })
		assert.ErrorContains(t, err, "released")
		closed <- first
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while an operation was in progress")
	default:
	}
	done()
	assert.True(t, <-closed, "the first Close closes")
	_, err = g.Enter()
	assert.ErrorIs(t, err, spi.ErrClosed)
	first, err := g.Close(func() error { t.Fatal("released twice"); return nil })
	assert.False(t, first)
	assert.NoError(t, err)
}

func TestDedupeAndSQLTx(t *testing.T) {
	jobs := []*spi.Job{
		{ID: id(1), IdempotencyKey: "a"},
		{ID: id(2)},
		{ID: id(3), IdempotencyKey: "b"},
		{ID: id(4), IdempotencyKey: "a"},
	}
	res, fresh := sqlcore.Dedupe(jobs, map[string]uuid.UUID{"b": id(9)})
	assert.Equal(t, []spi.InsertResult{{ID: id(1)}, {ID: id(2)}, {ID: id(9), Duplicate: true}, {ID: id(1), Duplicate: true}}, res,
		"a stored key and a key seen earlier in the batch are duplicates")
	assert.Equal(t, []*spi.Job{jobs[0], jobs[1]}, fresh)

	_, err := sqlcore.SQLTx("not a tx", "the X store")
	assert.ErrorContains(t, err, "transaction of type string, the X store needs a *sql.Tx")
	_, err = sqlcore.SQLTx((*sql.Tx)(nil), "the X store")
	assert.ErrorContains(t, err, "nil transaction")
}

func TestInChunks(t *testing.T) {
	var sizes []int
	got, err := sqlcore.InChunks([]uuid.UUID{id(1), id(2), id(3), id(4), id(5)}, 2, func(c []uuid.UUID) ([]int, error) {
		sizes = append(sizes, len(c))
		return []int{len(c)}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 1}, sizes)
	assert.Equal(t, []int{2, 2, 1}, got)
	_, err = sqlcore.InChunks([]uuid.UUID{id(1)}, 2, func([]uuid.UUID) ([]int, error) { return nil, errors.New("down") })
	assert.ErrorContains(t, err, "down")
}

// textIDs is the least sqlcore.Database: "?" placeholders, job ids as
// text, and statements that no test runs.
type textIDs struct{}

func (textIDs) Name() string { return "the test store" }
func (textIDs) Syntax() sqlcore.Syntax {
	return sqlcore.Syntax{Mark: func(int) string { return "?" }, ID: func(id uuid.UUID) any { return id.String() },
		JobColumns: sqlcore.JobColumns(func(col string) string { return col + " IS NULL" }, "j.tags")}
}
func (textIDs) InsertSizes() (rows, tags int)         { return 100, 1000 }
func (textIDs) ParseID(raw string) (uuid.UUID, error) { return uuid.Parse(raw) }
func (textIDs) IDText(raw string) string              { return raw }
func (textIDs) Tags(string) ([]string, error)         { return nil, nil }
func (textIDs) Holders(context.Context, *sql.Tx, []string) (map[string]int64, error) {
	return nil, errors.New("no resources here")
}
func (textIDs) PropertiesByPrefixSQL(uuid.UUID, string) (string, []any) { return "SELECT 1", nil }

// BenchmarkPortableInsert builds the portable insert of 200 jobs: it is on
// the path of every submission of the SQLite, MySQL, SQL Server and Oracle
// stores.
func BenchmarkPortableInsert(b *testing.B) {
	d := sqlcore.Compile[string](textIDs{}, sqlcore.Dialect[string]{})
	jobs := make([]*spi.Job, 200)
	for i := range jobs {
		jobs[i] = &spi.Job{ID: uuid.New(), TaskName: "noop", Payload: []byte("{}"), ScheduledAt: time.Now(), CreatedAt: time.Now(), MaxRetries: 3, Backoff: "exponential"}
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = d.InsertJobsSQL(jobs)
	}
}

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"statements and comments",
			"-- header; not a statement\n\nCREATE TABLE a (\n    x INT, -- inline; comment\n    -- a comment line;\n    y INT\n);\nINSERT INTO a VALUES (1, 2);\n  -- trailing\nSELECT 1",
			[]string{"CREATE TABLE a (\n    x INT, -- inline; comment\n    y INT\n)", "INSERT INTO a VALUES (1, 2)", "SELECT 1"}},
		{"a PL/SQL block ends with a slash and keeps its semicolons",
			"BEGIN\n  EXECUTE IMMEDIATE 'x';\n  -- inside;\nEXCEPTION\n  WHEN OTHERS THEN NULL;\nEND;\n/\nINSERT INTO v SELECT 1 FROM DUAL;\r\n",
			[]string{"BEGIN\n  EXECUTE IMMEDIATE 'x';\n  -- inside;\nEXCEPTION\n  WHEN OTHERS THEN NULL;\nEND;", "INSERT INTO v SELECT 1 FROM DUAL"}},
	} {
		assert.Equal(t, tc.want, sqlcore.SplitStatements(tc.script), tc.name)
	}
}
