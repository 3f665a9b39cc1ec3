package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// CompleteJobs writes each completion of a batch on its own job, found
// by its id: a batch of every outcome and a batch of successes alone (the
// shorter statement); a completion of an earlier claim, and one of a job
// whose row moved since its claim (another column rewritten), are told
// apart by the fence, not by where the claim left the row.
func TestCompleteBatchesByJobID(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	jobs := make([]*spi.Job, 6)
	for i := range jobs {
		jobs[i] = &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Status: spi.StatusPending, ScheduledAt: t0, CreatedAt: t0, MaxRetries: 3}
	}
	_, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{})
	require.NoError(t, err)
	claimed, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 4, Now: t0.Add(time.Second), Tasks: []string{"t"}})
	require.NoError(t, err)
	require.Len(t, claimed, 4)
	fin, retryAt := t0.Add(2*time.Second), t0.Add(time.Hour)
	// The third job's row moves: a column the claim does not fence is
	// rewritten.
	exec(t, s, `UPDATE `+qualify(s.schema, "scheduler_job")+` SET dep_children = 0 WHERE job_id = $1`, pgUUID(claimed[2].ID))
	cs := []spi.Completion{
		{ClaimRef: ref(claimed[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: fin, Result: []byte(`"zero"`), ResultType: "string"},
		{ClaimRef: ref(claimed[1]), Outcome: spi.OutcomeFailed, FinishedAt: fin, Attempts: 1, LastError: "one failed"},
		{ClaimRef: ref(claimed[2]), Outcome: spi.OutcomeRetry, FinishedAt: fin, RetryAt: retryAt, Attempts: 1, LastError: "two again"},
		{ClaimRef: spi.ClaimRef{JobID: claimed[3].ID, ClaimSeq: claimed[3].ClaimSeq - 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: fin},
	}
	applied, err := s.CompleteJobs(ctx, cs)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, false}, applied, "the current claims apply, the earlier claim's completion does not")
	got := make([]*spi.Job, len(claimed))
	for i, j := range claimed {
		got[i], err = s.GetJob(ctx, j.ID)
		require.NoError(t, err)
	}
	assert.Equal(t, spi.StatusSucceeded, got[0].Status)
	assert.Equal(t, []byte(`"zero"`), got[0].Result)
	assert.Equal(t, "n", got[0].OwnerNode, "a success keeps its owner")
	assert.Equal(t, spi.StatusFailed, got[1].Status)
	assert.Equal(t, "one failed", got[1].LastError)
	assert.Nil(t, got[1].Result)
	assert.Equal(t, spi.StatusPending, got[2].Status)
	assert.True(t, got[2].ScheduledAt.Equal(retryAt))
	assert.Equal(t, "two again", got[2].LastError)
	assert.Empty(t, got[2].OwnerNode, "a retry clears its owner")
	assert.Equal(t, spi.StatusRunning, got[3].Status, "the job of the earlier claim's completion is untouched")

	// A batch of successes alone takes the shorter statement.
	claimed, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 2, Now: t0.Add(4 * time.Second), Tasks: []string{"t"}})
	require.NoError(t, err)
	require.Len(t, claimed, 2)
	cs = cs[:0]
	for _, j := range claimed {
		cs = append(cs, spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0.Add(5 * time.Second),
			Result: []byte(j.ID.String()), ResultType: "string"})
	}
	cs[0].ClaimSeq++
	out := make([]bool, 2)
	require.NoError(t, s.writeCompletions(ctx, cs, []int{0, 1}, out))
	assert.Equal(t, []bool{false, true}, out, "successes: the wrong claim sequence writes nothing")
	g, err := s.GetJob(ctx, claimed[1].ID)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusSucceeded, g.Status)
	assert.Equal(t, []byte(claimed[1].ID.String()), g.Result, "the success's own result")
	g, err = s.GetJob(ctx, claimed[0].ID)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusRunning, g.Status, "the job of the wrong claim sequence is untouched")
}

// TestCompletionsArePlannedPerBatch checks that PostgreSQL plans each
// completion batch for its arguments and never settles on a generic plan
// (customPlan), even after many batches on one connection of a table that
// was analyzed while empty, and that the setting ends with each batch.
// Left to choose, PostgreSQL makes a generic plan after five batches and
// keeps it: on a table analyzed empty, one that reads the whole primary
// key for each batch, however large the table grows.
func TestCompletionsArePlannedPerBatch(t *testing.T) {
	ctx := context.Background()
	s := openStoreWith(t, "pool_max_conns=1")
	exec(t, s, `ANALYZE `+qualify(s.schema, "scheduler_job"))
	var before string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('jit')`).Scan(&before))
	for round := range 12 {
		insert(t, s, job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0))
		got := claim(t, s, "n", 2, t0, 0)
		require.Len(t, got, 2)
		successes := []spi.Completion{{ClaimRef: ref(got[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}}
		mixed := []spi.Completion{{ClaimRef: ref(got[1]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "x"}}
		for _, cs := range [][]spi.Completion{successes, mixed} {
			applied, err := s.CompleteJobs(ctx, cs)
			require.NoError(t, err)
			require.Equal(t, []bool{true}, applied, "round %d", round)
		}
	}
	for name, q := range map[string]string{"complete": s.sql.complete, "completeSucceeded": s.sql.completeSucceeded} {
		var generic, custom int64
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, q).Scan(&generic, &custom))
		assert.Zero(t, generic, "%s: %d generic plans", name, generic)
		assert.Equal(t, int64(12), custom, "%s: planned for each batch", name)
	}
	var after string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('jit')`).Scan(&after))
	assert.Equal(t, before, after, "the completions' settings outlived them")
}
