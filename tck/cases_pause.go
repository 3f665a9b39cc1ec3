package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The cases of paused tasks (spi.TaskPauser): a claim that begins after
// PauseTask returned takes no job of the task, whether the node lists its
// tasks or not; submissions are still written and wait; RUNNING jobs run
// on and their writes apply; ResumeTask makes the jobs claimable again.
func pauseCases() []testCase {
	return []testCase{
		{"PausedNotClaimed", func(t tb, f *fixture) {
			p := capability[spi.TaskPauser](f, "spi.TaskPauser")
			a := f.insertOne(withTask("report"))
			b := f.insertOne(withTask("email"))
			ran, err := p.PauseTask(f.ctx, "report", at(time.Second))
			require.NoError(t, err)
			assert.True(t, ran, "a running task is paused")
			again, err := p.PauseTask(f.ctx, "report", at(2*time.Second))
			require.NoError(t, err)
			assert.False(t, again, "pausing a paused task reports it paused already")
			paused, err := p.PausedTasks(f.ctx)
			require.NoError(t, err)
			require.Len(t, paused, 1)
			assert.Equal(t, "report", paused[0].Task)
			assert.True(t, paused[0].Since.Equal(at(time.Second)), "the first pause's time stays: %s", paused[0].Since)

			got := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 10, Now: at(time.Minute), Tasks: []string{"report", "email"}})
			assert.Equal(t, ids([]*spi.Job{b}), ids(got), "a node that lists both tasks takes only the running one's job")
			late := f.insertOne(withTask("report"))
			assert.Equal(t, spi.StatusPending, f.get(late.ID).Status, "a submission of a paused task is written and waits")
			assert.Empty(t, f.claim("node-b", 10, at(time.Hour), boost), "a node that lists no tasks takes none of a paused task's jobs either")

			resumed, err := p.ResumeTask(f.ctx, "report")
			require.NoError(t, err)
			assert.True(t, resumed)
			resumed, err = p.ResumeTask(f.ctx, "report")
			require.NoError(t, err)
			assert.False(t, resumed, "resuming a task that is not paused reports it")
			paused, err = p.PausedTasks(f.ctx)
			require.NoError(t, err)
			assert.Empty(t, paused)
			got = f.claim("node-b", 10, at(time.Hour), boost)
			assert.ElementsMatch(t, ids([]*spi.Job{a, late}), ids(got), "resumed, its jobs are claimed")
		}},
		{"RunningRunsOn", func(t tb, f *fixture) {
			// A pause stops claims, not runs: the RUNNING job's retry
			// applies, and it waits PENDING until the resume.
			p := capability[spi.TaskPauser](f, "spi.TaskPauser")
			j := f.insertOne(withTask("report"), withMaxRetries(3))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			_, err := p.PauseTask(f.ctx, "report", at(2*time.Second))
			require.NoError(t, err)
			require.Equal(t, []bool{true}, f.complete(retried(c, at(3*time.Second), at(3*time.Second), 1, "again")), "the running job's write applies")
			assert.Empty(t, f.claim("node-a", 10, at(time.Minute), boost), "its retry waits while the task is paused")
			_, err = p.ResumeTask(f.ctx, "report")
			require.NoError(t, err)
			assert.Len(t, f.claim("node-a", 10, at(time.Minute), boost), 1, "and runs once it is resumed")
		}},
		{"OtherTasksUnaffected", func(t tb, f *fixture) {
			// Pausing a task with no jobs, and one whose name is a prefix
			// of another's, leaves the other tasks alone.
			p := capability[spi.TaskPauser](f, "spi.TaskPauser")
			_, err := p.PauseTask(f.ctx, "mail", at(time.Second))
			require.NoError(t, err)
			_, err = p.PauseTask(f.ctx, "idle", at(time.Second))
			require.NoError(t, err)
			m := f.insertOne(withTask("mailer"))
			got := f.claim("node-a", 10, at(time.Minute), boost)
			assert.Equal(t, ids([]*spi.Job{m}), ids(got), "task mailer is not task mail")
		}},
	}
}
