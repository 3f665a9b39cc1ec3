package tools_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// rateChildEnv names, in a worker process of TestRateLimitThreeNodesLong,
// the PostgreSQL DSN, the schema and the node's name.
const rateChildEnv = "RATCHET_TEST_RATE_CHILD"

// rateTask is the rate-limited no-op of the rate tests.
var rateTask = ratchet.NewVoidTask("rate.call", func(context.Context, int) error { return nil })

// The acceptance run, opt-in: jobs queued under one rate limit
// (RATCHET_TEST_RATE starts per second, 1,000 by default; 50 s of work),
// worked by three node processes (this test binary, run again) on
// PostgreSQL. The starts the store logged (scheduler_rate_start, read
// every 100 ms, before its rows leave the period) never exceed the limit
// in any window of a second, add up to one per job, and (up to 1,000 a
// second) average at least 95 % of the limit.
func TestRateLimitThreeNodesLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("set RATCHET_TEST_LONG=1 to work a rate-limited queue with three node processes")
	}
	rate := 1000
	if v := os.Getenv("RATCHET_TEST_RATE"); v != "" {
		rate, _ = strconv.Atoi(v)
	}
	jobs := min(50*rate, 50000)
	dsn, schema := dbtest.Postgres(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	args := make([]int, jobs)
	for i := range args {
		args[i] = i
	}
	for chunk := range slices.Chunk(args, 5000) {
		_, err := rateTask.SubmitMany(ctx, c, chunk, ratchet.WithRateLimit("api", rate, time.Second))
		require.NoError(t, err)
	}
	nodeProcesses(t, 3, "TestRateLimitChild", rateChildEnv, dsn, schema)
	// Read the log until every job succeeded.
	starts := map[time.Time]int64{}
	table := fmt.Sprintf("%q.scheduler_rate_start", schema)
	deadline := time.Now().Add(time.Duration(jobs/rate)*time.Second + 2*time.Minute)
	for {
		rows, err := s.Pool().Query(ctx, "SELECT started_time, starts FROM "+table)
		require.NoError(t, err)
		for rows.Next() {
			var at pgtype.Timestamptz
			var n int64
			require.NoError(t, rows.Scan(&at, &n))
			starts[at.Time] = n
		}
		require.NoError(t, rows.Err())
		var done int
		require.NoError(t, s.Pool().QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %q.scheduler_job WHERE status = 'SUCCEEDED'`, schema)).Scan(&done))
		if done == jobs {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d of %d jobs done by the deadline", done, jobs)
		<-time.After(100 * time.Millisecond)
	}
	times := make([]time.Time, 0, len(starts))
	var total int64
	for at, n := range starts {
		times = append(times, at)
		total += n
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	peak, inWindow, first := int64(0), int64(0), 0
	for _, at := range times {
		inWindow += starts[at]
		for !times[first].After(at.Add(-time.Second)) {
			inWindow -= starts[times[first]]
			first++
		}
		peak = max(peak, inWindow)
	}
	span := times[len(times)-1].Sub(times[0])
	avg := float64(total-starts[times[len(times)-1]]) / span.Seconds() // the last window's starts end the span
	t.Logf("rate limit %d/s, %d jobs on 3 nodes: %d starts logged in %d claims over %s; peak %d in a second; average %.0f/s (%.1f %%)",
		rate, jobs, total, len(times), span.Round(time.Millisecond), peak, avg, 100*avg/float64(rate))
	assert.Equal(t, int64(jobs), total, "one logged start per job")
	assert.LessOrEqual(t, peak, int64(rate), "never more starts than the limit in any second")
	if rate <= 1000 {
		// Above, the claims of rate-limited jobs are the bottleneck here
		// (about 4,200 jobs/s with three nodes of 200 slots on 2 cores).
		assert.GreaterOrEqual(t, avg, 0.95*float64(rate), "at least 95 %% of the limit on average")
	}
}

// TestRateLimitChild is one node process of TestRateLimitThreeNodesLong;
// it skips when run on its own.
func TestRateLimitChild(t *testing.T) {
	serveNode(t, rateChildEnv, "TestRateLimitThreeNodesLong", engine.Options{Concurrency: 200}, rateTask)
}
