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

// A claim hints each job's row (its tuple id), and completions carrying
// the hints are written by tuple id alone; a hint that went stale (the row
// moved since the claim) or names another row writes nothing through the
// tuple ids, and CompleteJobs then writes that completion by its job id.
func TestCompleteByRowHint(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	jobs := make([]*spi.Job, 4)
	for i := range jobs {
		jobs[i] = &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Status: spi.StatusPending, ScheduledAt: t0, CreatedAt: t0, MaxRetries: 3}
	}
	_, err := s.InsertJobs(ctx, jobs)
	require.NoError(t, err)
	claimed, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 4, Now: t0.Add(time.Second), Tasks: []string{"t"}})
	require.NoError(t, err)
	require.Len(t, claimed, 4)
	cs := make([]spi.Completion, len(claimed))
	for i, j := range claimed {
		require.NotZero(t, j.RowHint, "a claim hints its rows")
		cs[i] = spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeSucceeded,
			FinishedAt: t0.Add(2 * time.Second), RowHint: j.RowHint}
	}
	cs[1].RowHint = cs[3].RowHint // another job's row
	cs[1].Outcome, cs[1].Attempts, cs[1].LastError = spi.OutcomeFailed, 1, "job 1 failed"
	// The third job's row moves (a column the claim does not fence is
	// rewritten), so its hint names a dead version.
	exec(t, s, `UPDATE `+qualify(s.schema, "scheduler_job")+` SET dep_children = 0 WHERE job_id = $1`, pgUUID(claimed[2].ID))

	out := make([]bool, len(cs))
	require.NoError(t, s.writeCompletions(ctx, true, cs, []int{0, 1, 2, 3}, out))
	assert.Equal(t, []bool{true, false, false, true}, out, "by tuple id: the right hints apply, the wrong and the stale ones write nothing")

	for i := range cs {
		cs[i].FinishedAt = t0.Add(3 * time.Second)
	}
	applied, err := s.CompleteJobs(ctx, cs[1:3])
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, applied, "CompleteJobs writes the completions whose hints failed by their ids")
	for i, j := range claimed {
		got, err := s.GetJob(ctx, j.ID)
		require.NoError(t, err)
		want := spi.StatusSucceeded
		if i == 1 {
			want = spi.StatusFailed
		}
		assert.Equal(t, want, got.Status, "job %d: each completion on its own job", i)
	}

	// A batch of successes alone takes the shorter statement.
	more := []*spi.Job{jobs[0].Clone(), jobs[0].Clone()}
	for _, j := range more {
		j.ID = uuid.Must(uuid.NewV7())
	}
	_, err = s.InsertJobs(ctx, more)
	require.NoError(t, err)
	claimed, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 2, Now: t0.Add(4 * time.Second), Tasks: []string{"t"}})
	require.NoError(t, err)
	require.Len(t, claimed, 2)
	cs = cs[:0]
	for _, j := range claimed {
		cs = append(cs, spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeSucceeded,
			FinishedAt: t0.Add(5 * time.Second), Result: []byte(j.ID.String()), ResultType: "string", RowHint: j.RowHint})
	}
	cs[0].RowHint = cs[1].RowHint
	out = make([]bool, 2)
	require.NoError(t, s.writeCompletions(ctx, true, cs, []int{0, 1}, out))
	assert.Equal(t, []bool{false, true}, out, "successes by tuple id: the wrong hint writes nothing")
	got, err := s.GetJob(ctx, claimed[1].ID)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusSucceeded, got.Status)
	assert.Equal(t, []byte(claimed[1].ID.String()), got.Result, "the success's own result")
	assert.Equal(t, "n", got.OwnerNode, "a success keeps its owner")
	got, err = s.GetJob(ctx, claimed[0].ID)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusRunning, got.Status, "the job whose hint was wrong is untouched")
}
