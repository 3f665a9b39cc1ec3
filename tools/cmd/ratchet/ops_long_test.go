package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// The acceptance run of the bulk retry (opt-in: RATCHET_TEST_LONG=1):
// 100,000 jobs in the dead-letter queue of PostgreSQL, no node running,
// `ratchet dlq retry` by filter; every job is PENDING afterwards.
func TestLongDLQRetry100k(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1")
	}
	const n = 100_000
	ctx := context.Background()
	dsn, schema := dbtest.Postgres(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for done := 0; done < n; done += 10_000 {
		jobs := make([]*spi.Job, 10_000)
		for i := range jobs {
			jobs[i] = &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "email.bounce", Payload: []byte(`{"n":1}`), Status: spi.StatusPending,
				Priority: spi.PriorityNormal, ScheduledAt: now, CreatedAt: now, MaxRetries: 0, Backoff: spi.BackoffFixed, BackoffParam: time.Second}
		}
		_, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{})
		require.NoError(t, err)
	}
	// Into the DLQ as a failed run would put them: FAILED, one attempt.
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(ctx, `UPDATE `+`"`+schema+`".scheduler_job SET status = 'FAILED', attempts = 1, finished_time = now(), last_error = 'no such mailbox'`)
	require.NoError(t, err)

	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"dlq", "retry", "--store", dsn, "--schema", schema, "--task", "email.bounce", "--yes"}, &out, &errOut)
	took := time.Since(start)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	t.Logf("ratchet dlq retry of %d jobs: %s (%.0f jobs/s)\n%s", n, took.Round(100*time.Millisecond), n/took.Seconds(), out.String())
	assert.Contains(t, out.String(), "100000 jobs match")
	assert.Contains(t, out.String(), "100000 changed, 0 skipped")
	var pending, other int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'PENDING' AND attempts = 0), count(*) FILTER (WHERE status <> 'PENDING') FROM "`+schema+`".scheduler_job`).Scan(&pending, &other))
	assert.Equal(t, n, pending, "every job is PENDING again, its attempts reset")
	assert.Zero(t, other)
}
