package tools_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// fairChildEnv names, in a node process of TestFairShareLong, the
// PostgreSQL DSN, the schema and the node's name.
const fairChildEnv = "RATCHET_TEST_FAIR_CHILD"

// fairLongTask is the job of the long fair-share test: it does nothing.
var fairLongTask = ratchet.NewVoidTask("fair.long", func(context.Context, int) error { return nil })

// The acceptance run, opt-in: one key with 1,000,000 pending jobs and 100
// keys with 10 each, on PostgreSQL, worked by three node processes (this
// test binary, run again) of 100 slots. From the rows: every small-key
// job finished before 2,000 jobs of the big key were claimed.
func TestFairShareLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("set RATCHET_TEST_LONG=1 to work one key of 1,000,000 jobs beside 100 keys of 10 with three node processes")
	}
	const big, keys, perKey, batch = 1_000_000, 100, 10, 5_000
	dsn, schema := dbtest.Postgres(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	start := time.Now()
	args := make([]int, batch)
	for done := 0; done < big; done += batch {
		_, err := fairLongTask.SubmitMany(ctx, c, args, ratchet.WithFairnessKey("big"))
		require.NoError(t, err)
	}
	inserted := time.Since(start)
	small := map[uuid.UUID]bool{}
	for k := range keys {
		ids, err := fairLongTask.SubmitMany(ctx, c, args[:perKey], ratchet.WithFairnessKey(fmt.Sprint("tenant-", k)))
		require.NoError(t, err)
		for _, id := range ids {
			small[id] = true
		}
	}
	var pending int
	require.NoError(t, s.Pool().QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %q.scheduler_job WHERE status = 'PENDING'`, schema)).Scan(&pending))
	t.Logf("%d jobs of one key submitted in %s (%.0f/s); %d jobs in the line", big, inserted.Round(time.Millisecond), float64(big)/inserted.Seconds(), pending)

	start = time.Now()
	stop := nodeProcesses(t, 3, "TestFairShareChild", fairChildEnv, dsn, schema)
	smallIDs := make([]uuid.UUID, 0, len(small))
	for id := range small {
		smallIDs = append(smallIDs, id)
	}
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var open int
		require.NoError(t, s.Pool().QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %q.scheduler_job WHERE job_id = ANY($1) AND status <> 'SUCCEEDED'`, schema), smallIDs).Scan(&open))
		if open == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d small-key jobs unfinished by the deadline", open)
		<-tick.C
	}
	took := time.Since(start)
	stop()

	// From the rows: the last small-key finish, and the big key's claims
	// up to it.
	var lastSmall time.Time
	var bigClaims []time.Time
	rows, err := s.Pool().Query(ctx, fmt.Sprintf(`SELECT job_id, claimed_time, finished_time FROM %q.scheduler_job WHERE claimed_time IS NOT NULL`, schema))
	require.NoError(t, err)
	for rows.Next() {
		var id uuid.UUID
		var claimed, finished pgtype.Timestamptz
		require.NoError(t, rows.Scan(&id, &claimed, &finished))
		switch {
		case small[id] && finished.Time.After(lastSmall):
			lastSmall = finished.Time
		case !small[id]:
			bigClaims = append(bigClaims, claimed.Time)
		}
	}
	require.NoError(t, rows.Err())
	slices.SortFunc(bigClaims, func(a, b time.Time) int { return a.Compare(b) })
	before := 0
	for _, at := range bigClaims {
		if !at.After(lastSmall) {
			before++
		}
	}
	t.Logf("the %d small-key jobs finished %s after the nodes started; %d jobs of the big key were claimed by then (%d by the time the nodes were stopped)",
		len(small), took.Round(time.Millisecond), before, len(bigClaims))
	assert.Less(t, before, 2000, "every small-key job finished before 2,000 big-key jobs started")
}

// TestFairShareChild is one node process of TestFairShareLong; it skips
// when run on its own.
func TestFairShareChild(t *testing.T) {
	serveNode(t, fairChildEnv, "TestFairShareLong", engine.Options{Concurrency: 100}, fairLongTask)
}
