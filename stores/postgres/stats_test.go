package postgres

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Over its exact size the job table is sampled: the counts come back
// scaled, flagged estimated, and near the truth; under it they are exact.
func TestJobStatsSamplesALargeTable(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	want := map[string]int64{"stats.a": 24000, "stats.b": 8000}
	for task, n := range want {
		for done := int64(0); done < n; done += 2000 {
			jobs := make([]*spi.Job, 2000)
			for i := range jobs {
				jobs[i] = &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: task, Payload: []byte(`{"n":1}`), Status: spi.StatusPending,
					Priority: spi.PriorityNormal, ScheduledAt: now, CreatedAt: now, MaxRetries: 3, Backoff: spi.BackoffFixed, BackoffParam: time.Second}
			}
			_, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{})
			require.NoError(t, err)
		}
	}
	table := qualify(s.schema, "scheduler_job")
	read := func(exactPages int) (map[string]int64, bool) {
		q, err := jobCountsSQL(ctx, s.db, table, exactPages)
		require.NoError(t, err)
		rows, err := s.pool.Query(ctx, q)
		require.NoError(t, err)
		defer rows.Close()
		got, estimated := map[string]int64{}, false
		for rows.Next() {
			var status, task string
			var p, n, est int64
			require.NoError(t, rows.Scan(&status, &task, &p, &n, &est))
			require.Equal(t, "PENDING", status)
			got[task] += n
			estimated = estimated || est == 1
		}
		require.NoError(t, rows.Err())
		return got, estimated
	}
	got, estimated := read(1 << 30)
	assert.False(t, estimated)
	assert.Equal(t, want, got, "a table under the exact size is counted")

	var pages int64
	require.NoError(t, s.pool.QueryRow(ctx, fmt.Sprintf("SELECT pg_relation_size('%s'::regclass) / current_setting('block_size')::bigint", table)).Scan(&pages))
	require.Greater(t, pages, int64(100), "the table is large enough to sample a part of it")
	got, estimated = read(int(pages / 4))
	assert.True(t, estimated, "a table over the exact size is sampled")
	for task, n := range want {
		assert.InDelta(t, float64(n), float64(got[task]), 0.35*float64(n), "the sampled count of %s is near the truth", task)
	}
}

// The gauges at 10,000,000 jobs (opt-in: RATCHET_TEST_LONG=1): the time of
// JobStats against an exact count, and the sample's error per status.
func TestLongJobStatsAt10M(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1 (loads 10,000,000 jobs)")
	}
	s := openStore(t)
	ctx := context.Background()
	table := qualify(s.schema, "scheduler_job")
	start := time.Now()
	for chunk := range 10 {
		exec(t, s, `INSERT INTO `+table+` (job_id, task_name, payload, status, priority, scheduled_time, created_time, owner_node, finished_time)
			SELECT gen_random_uuid(), 'task.' || (g % 20), '{"n":1}', 
				CASE WHEN g % 100 < 60 THEN 'SUCCEEDED' WHEN g % 100 < 95 THEN 'PENDING' WHEN g % 100 < 99 THEN 'FAILED' ELSE 'RUNNING' END,
				g % 5, now() - (g % 86400) * interval '1 second', now(),
				CASE WHEN g % 100 = 99 THEN 'n1' END, CASE WHEN g % 100 < 60 OR g % 100 BETWEEN 95 AND 98 THEN now() END
			FROM generate_series($1::bigint, $2::bigint) g`, chunk*1_000_000, chunk*1_000_000+999_999)
	}
	exec(t, s, "VACUUM ANALYZE "+table)
	t.Logf("loaded 10,000,000 jobs in %s", time.Since(start).Round(time.Second))

	exactStart := time.Now()
	rows, err := s.pool.Query(ctx, `SELECT status, count(*) FROM `+table+` GROUP BY status`)
	require.NoError(t, err)
	exact := map[spi.Status]int64{}
	for rows.Next() {
		var st string
		var n int64
		require.NoError(t, rows.Scan(&st, &n))
		exact[spi.Status(st)] = n
	}
	require.NoError(t, rows.Err())
	t.Logf("exact GROUP BY status: %s", time.Since(exactStart).Round(time.Millisecond))

	var times []time.Duration
	var st spi.JobStats
	for range 7 {
		t0 := time.Now()
		st, err = s.JobStats(ctx, time.Now())
		require.NoError(t, err)
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	t.Logf("JobStats: median %s (min %s, max %s) over 7 reads; %d counts, estimated %v, oldest due %s ago",
		times[3].Round(time.Millisecond), times[0].Round(time.Millisecond), times[6].Round(time.Millisecond),
		len(st.Counts), st.Estimated, time.Since(st.OldestDue).Round(time.Second))
	assert.True(t, st.Estimated)
	got := map[spi.Status]int64{}
	for _, c := range st.Counts {
		got[c.Status] += c.N
	}
	for status, n := range exact {
		t.Logf("%-10s exact %9d, estimated %9d (%+.1f %%)", status, n, got[status], 100*float64(got[status]-n)/float64(n))
		if n >= 1_000_000 {
			assert.InDelta(t, float64(n), float64(got[status]), 0.1*float64(n), "the estimate of %s is within 10 %%", status)
		}
	}
}
