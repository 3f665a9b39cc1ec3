package storeflag

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// benchJobs opens a bench store on the test server and submits jobs no-op
// jobs to it, in calls of 1,000 over three tasks and two priorities.
func benchJobs(t *testing.T, jobs int) (*Opened, *postgres.Store) {
	t.Helper()
	dsn, _ := dbtest.Postgres(t)
	ctx := context.Background()
	o, err := OpenForBench(ctx, dsn, "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, o.Close()) })
	require.NotNil(t, o.CopyReference)
	client, err := ratchet.NewClient(o.Store, ratchet.ClientOptions{})
	require.NoError(t, err)
	tasks := []*ratchet.Task[struct{}, ratchet.Void]{
		ratchet.NewVoidTask("a", func(context.Context, struct{}) error { return nil }),
		ratchet.NewVoidTask("b", func(context.Context, struct{}) error { return nil }),
		ratchet.NewVoidTask("c", func(context.Context, struct{}) error { return nil }),
	}
	for left := jobs; left > 0; left -= 1000 {
		calls := make([]ratchet.Call, min(left, 1000))
		for i := range calls {
			calls[i] = tasks[i%3].With(struct{}{}, ratchet.WithPriority(ratchet.Priority(i%2)))
		}
		_, err := client.SubmitCalls(ctx, calls)
		require.NoError(t, err)
	}
	return o, o.Store.(*postgres.Store)
}

// The reference copies every row as it is, in chunks of the batch (the
// last one shorter), into a table of the same migrations.
func TestCopyJobsCopiesTheRows(t *testing.T) {
	ctx := context.Background()
	_, s := benchJobs(t, 3000)
	to := s.Schema() + copySuffix
	_, err := postgres.Migrate(ctx, s.Pool(), to)
	require.NoError(t, err)
	defer func() {
		_, err := s.Pool().Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{to}.Sanitize()+" CASCADE")
		assert.NoError(t, err)
	}()
	rows, took, err := copyJobs(ctx, s.Pool(), s.Schema(), to, 700)
	require.NoError(t, err)
	assert.Equal(t, int64(3000), rows)
	assert.Positive(t, took)
	digest := func(schema string) (n int, sum string) {
		require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*), md5(string_agg(j::text, ',' ORDER BY job_id)) FROM `+
			pgx.Identifier{schema, "scheduler_job"}.Sanitize()+` j`).Scan(&n, &sum))
		return n, sum
	}
	n, want := digest(s.Schema())
	m, got := digest(to)
	assert.Equal(t, 3000, n)
	assert.Equal(t, n, m)
	assert.Equal(t, want, got, "the copy's rows are the run's")

	// Into a table that is not empty: the ids collide, and the chunk's
	// transaction is rolled back, leaving the connection usable.
	_, _, err = copyJobs(ctx, s.Pool(), s.Schema(), to, 1000)
	assert.ErrorContains(t, err, "duplicate key")
	m, _ = digest(to)
	assert.Equal(t, 3000, m)
}

// CopyReference returns a rate and leaves no schema behind.
func TestCopyReference(t *testing.T) {
	ctx := context.Background()
	o, s := benchJobs(t, 2500)
	start := time.Now()
	rate, err := o.CopyReference(ctx, 1000)
	require.NoError(t, err)
	t.Logf("server COPY of 2500 rows: %.0f rows/s (%s in all)", rate, time.Since(start).Round(time.Millisecond))
	assert.Positive(t, rate)
	var left bool
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s.Schema()+copySuffix).Scan(&left))
	assert.False(t, left, "the copy's schema is dropped")
	var n int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{s.Schema(), "scheduler_job"}.Sanitize()).Scan(&n))
	assert.Equal(t, 2500, n, "the run's rows are untouched")

	_, err = o.CopyReference(ctx, 0)
	assert.ErrorContains(t, err, "batch 0")
}

// Tables whose columns differ, or with a generated column, are refused.
func TestSameColumns(t *testing.T) {
	ctx := context.Background()
	_, s := benchJobs(t, 1)
	other := s.Schema() + "_other"
	q := pgx.Identifier{other}.Sanitize()
	_, err := s.Pool().Exec(ctx, "CREATE SCHEMA "+q+"; CREATE TABLE "+q+".scheduler_job (job_id uuid, n int GENERATED ALWAYS AS (1) STORED);"+
		"CREATE TABLE "+q+".same (LIKE "+pgx.Identifier{s.Schema(), "scheduler_job"}.Sanitize()+"); ALTER TABLE "+q+".same ADD COLUMN g int GENERATED ALWAYS AS (1) STORED")
	require.NoError(t, err)
	defer func() { _, _ = s.Pool().Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+q+" CASCADE") }()
	conn, err := s.Pool().Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	run := pgx.Identifier{s.Schema(), "scheduler_job"}.Sanitize()
	assert.ErrorContains(t, sameColumns(ctx, conn.Conn(), run, q+".scheduler_job"), "differ in their columns")
	assert.ErrorContains(t, sameColumns(ctx, conn.Conn(), q+".same", q+".same"), "has a generated column, g")
	assert.NoError(t, sameColumns(ctx, conn.Conn(), run, run))
}
