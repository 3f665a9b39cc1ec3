package tools_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// The acceptance run of pausing a task (opt-in: RATCHET_TEST_LONG=1):
// PostgreSQL, two nodes (two engines, each with its own store and pool),
// a 50,000-job backlog of one task worked at about 5,000 jobs/s. A second
// in, the task is paused: the rows show no job claimed after PauseTask
// returned (by the database's clock: each claim stamps its jobs with its
// node's clock, the same machine's), and the jobs claimed between the
// call and its return are within the documented bound (the claims in
// flight, each at most a batch). Three seconds later nothing more has
// started; resumed, every job finishes.
func TestPauseUnderBacklogLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1 (a 50,000-job backlog on PostgreSQL, about 20 s)")
	}
	ctx := context.Background()
	dsn, schema := dbtest.Postgres(t)
	var ran atomic.Int64
	work := ratchet.NewVoidTask("report", func(ctx context.Context, _ int) error {
		time.Sleep(20 * time.Millisecond) // a body's work, on the real clock
		ran.Add(1)
		return nil
	})
	const slots, jobs = 50, 50000
	var nodes []*engine.Engine
	for _, id := range []string{"node-a", "node-b"} {
		s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		eng, err := engine.New(s, engine.Options{NodeID: id, Concurrency: slots, Client: ratchet.ClientOptions{Logger: quiet}}, work)
		require.NoError(t, err)
		nodes = append(nodes, eng)
	}
	client := nodes[0].Client()
	args := make([]int, jobs)
	_, err := work.SubmitMany(ctx, client, args)
	require.NoError(t, err)
	for _, eng := range nodes {
		require.NoError(t, eng.Start(ctx))
		t.Cleanup(func() { _ = eng.Stop(context.Background()) })
	}
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	dbNow := func() time.Time {
		var now time.Time
		require.NoError(t, conn.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&now))
		return now
	}
	claimedSince := func(from time.Time) int64 {
		var n int64
		require.NoError(t, conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.scheduler_job WHERE claimed_time > $1`, pgx.Identifier{schema}.Sanitize()), from).Scan(&n))
		return n
	}

	time.Sleep(time.Second) // the backlog under way
	called := dbNow()
	require.NoError(t, client.PauseTask(ctx, "report"))
	returned := dbNow()
	before := ran.Load()
	time.Sleep(3 * time.Second)
	inCall := claimedSince(called) - claimedSince(returned)
	after := claimedSince(returned)
	t.Logf("ran before the pause: %d; claimed during the call (%s): %d; claimed after it returned: %d; ran in the 3 s after: %d",
		before, returned.Sub(called), inCall, after, ran.Load()-before)
	assert.Zero(t, after, "no claim after PauseTask returned takes a job of the task")
	assert.LessOrEqual(t, inCall, int64(2*slots), "within the bound: the claims in flight, each at most a batch")

	require.NoError(t, client.ResumeTask(ctx, "report"))
	require.Eventually(t, func() bool { return ran.Load() == jobs }, 60*time.Second, 50*time.Millisecond, "resumed, every job runs")
}
