package tools_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
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

// seqChildEnv names, in a node process of TestSequencesWithKillsLong, the
// PostgreSQL DSN, the schema and the node's name.
const seqChildEnv = "RATCHET_TEST_SEQUENCE_CHILD"

// seqLongTask is the job of the long sequence test: 5 ms of work, so that
// a kill finds jobs running.
var seqLongTask = ratchet.NewVoidTask("seq.long", func(ctx context.Context, n int) error {
	select {
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
})

// The acceptance run, opt-in: 1,000 sequences of 20 jobs on PostgreSQL,
// worked by three node processes (this test binary, run again) of which
// one is killed (SIGKILL) and replaced every 1.5 s, with a crash budget
// of 3. From the rows: every job finished, and none of a sequence was
// claimed (its final claim, and every earlier attempt) before the job
// before it had finished.
func TestSequencesWithKillsLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("set RATCHET_TEST_LONG=1 to work 1,000 sequences of 20 jobs with three node processes under kills")
	}
	const keys, perKey = 1000, 20
	dsn, schema := dbtest.Postgres(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	args := make([]int, perKey)
	for i := range args {
		args[i] = i
	}
	ids := make([][]uuid.UUID, keys)
	for k := range keys {
		ids[k], err = seqLongTask.SubmitMany(ctx, c, args, ratchet.WithSequenceKey(fmt.Sprint("order-", k)))
		require.NoError(t, err)
	}
	start := time.Now()
	gen := 0
	spawn := func() *exec.Cmd {
		gen++
		return nodeProcess(t, "TestSequenceChild", seqChildEnv, dsn, schema, fmt.Sprint("node-", gen))
	}
	nodes := []*exec.Cmd{spawn(), spawn(), spawn()}
	defer func() {
		for _, cmd := range nodes {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	deadline := time.Now().Add(10 * time.Minute)
	tick := time.NewTicker(1500 * time.Millisecond)
	defer tick.Stop()
	for {
		var open int
		require.NoError(t, s.Pool().QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %q.scheduler_job WHERE status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'SKIPPED')`, schema)).Scan(&open))
		if open == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d of %d jobs unfinished by the deadline", open, keys*perKey)
		<-tick.C
		i := rng.IntN(len(nodes))
		_ = nodes[i].Process.Kill()
		_ = nodes[i].Wait()
		nodes[i] = spawn()
		kills++
	}
	took := time.Since(start)

	type row struct {
		status          string
		claimed, finish time.Time
		crashes         int
	}
	jobs := map[uuid.UUID]row{}
	rows, err := s.Pool().Query(ctx, fmt.Sprintf(`SELECT job_id, status, claimed_time, finished_time, crash_count FROM %q.scheduler_job`, schema))
	require.NoError(t, err)
	for rows.Next() {
		var id uuid.UUID
		var r row
		var claimed, finished pgtype.Timestamptz
		require.NoError(t, rows.Scan(&id, &r.status, &claimed, &finished, &r.crashes))
		r.claimed, r.finish = claimed.Time, finished.Time
		jobs[id] = r
	}
	require.NoError(t, rows.Err())
	starts := map[uuid.UUID][]time.Time{}
	rows, err = s.Pool().Query(ctx, fmt.Sprintf(`SELECT job_id, started_time FROM %q.scheduler_job_attempt WHERE started_time IS NOT NULL`, schema))
	require.NoError(t, err)
	attempts := 0
	for rows.Next() {
		var id uuid.UUID
		var at pgtype.Timestamptz
		require.NoError(t, rows.Scan(&id, &at))
		starts[id] = append(starts[id], at.Time)
		attempts++
	}
	require.NoError(t, rows.Err())
	var crashes, early, failed int
	for k := range keys {
		for n, id := range ids[k] {
			r := jobs[id]
			crashes += r.crashes
			if r.status != "SUCCEEDED" {
				failed++
			}
			if n == 0 {
				continue
			}
			before := jobs[ids[k][n-1]]
			for _, at := range append(starts[id], r.claimed) {
				if at.Before(before.finish) {
					early++
					t.Errorf("sequence %d: job %d started at %s, before job %d finished at %s", k, n, at.Format(time.RFC3339Nano), n-1, before.finish.Format(time.RFC3339Nano))
					break
				}
			}
		}
	}
	t.Logf("%d sequences of %d jobs, 3 node processes, %d kills in %s: %d attempt records, %d crash redeliveries, %d jobs not SUCCEEDED, %d started early",
		keys, perKey, kills, took.Round(time.Millisecond), attempts, crashes, failed, early)
	assert.Zero(t, failed, "every job succeeded")
	assert.Zero(t, early, "no job started before the one before it finished")
	assert.Positive(t, crashes, "the kills hit running jobs")
}

// TestSequenceChild is one node process of TestSequencesWithKillsLong; it
// skips when run on its own.
func TestSequenceChild(t *testing.T) {
	serveNode(t, seqChildEnv, "TestSequencesWithKillsLong", engine.Options{Concurrency: 100, HeartbeatInterval: 200 * time.Millisecond,
		OrphanGrace: time.Second, OrphanScanInterval: 500 * time.Millisecond}, seqLongTask)
}
