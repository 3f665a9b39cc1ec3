package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// stats reads JobStats at now, failing the case on an error, and returns
// its counts keyed by status, task and priority.
func (f *fixture) stats(r spi.StatsReader, now time.Time) (spi.JobStats, map[spi.JobCount]bool) {
	f.t.Helper()
	st, err := r.JobStats(f.ctx, now)
	require.NoError(f.t, err, "JobStats")
	assert.False(f.t, st.Estimated, "a table of a few jobs is counted, not estimated")
	set := map[spi.JobCount]bool{}
	for _, c := range st.Counts {
		require.Positive(f.t, c.N, "JobStats returns no empty counts: %+v", c)
		k := c
		require.False(f.t, set[k], "JobStats returns each status, task and priority once: %+v", c)
		set[k] = true
	}
	return st, set
}

func statsCases() []testCase {
	return []testCase{
		{"Empty", func(t tb, f *fixture) {
			r := capability[spi.StatsReader](f, "spi.StatsReader")
			st, _ := f.stats(r, at(0))
			assert.Empty(t, st.Counts, "an empty store has no counts")
			assert.True(t, st.OldestDue.IsZero(), "an empty store has no oldest due job")
		}},
		{"CountsByStatusTaskPriority", func(t tb, f *fixture) {
			r := capability[spi.StatsReader](f, "spi.StatsReader")
			run := f.insert(f.newJob(withTask("b")), f.newJob(withTask("b")))
			c1 := f.claimOne(run[0].ID, "n1", at(0))
			f.claimOne(run[1].ID, "n1", at(0))
			require.Equal(t, []bool{true}, f.complete(succeeded(c1, at(time.Second), nil, "")))
			f.insert(
				f.newJob(withTask("a")), f.newJob(withTask("a")), f.newJob(withTask("a"), withPriority(spi.PriorityHigh)),
				f.newJob(withTask("b"), withDue(at(time.Hour))),
			)
			_, set := f.stats(r, at(0))
			want := []spi.JobCount{
				{Status: spi.StatusPending, Task: "a", Priority: spi.PriorityNormal, N: 2},
				{Status: spi.StatusPending, Task: "a", Priority: spi.PriorityHigh, N: 1},
				{Status: spi.StatusPending, Task: "b", Priority: spi.PriorityNormal, N: 1},
				{Status: spi.StatusRunning, Task: "b", Priority: spi.PriorityNormal, N: 1},
				{Status: spi.StatusSucceeded, Task: "b", Priority: spi.PriorityNormal, N: 1},
			}
			for _, w := range want {
				assert.True(t, set[w], "JobStats counts %+v; it returned %v", w, set)
			}
			assert.Len(t, set, len(want), "JobStats returns only the counts of the jobs there are")
		}},
		{"OldestDue", func(t tb, f *fixture) {
			r := capability[spi.StatsReader](f, "spi.StatsReader")
			jobs := f.insert(
				f.newJob(withDue(at(-time.Hour))),
				f.newJob(withDue(at(-time.Minute))),
				f.newJob(withDue(at(time.Hour))),
			)
			st, _ := f.stats(r, at(-2*time.Hour))
			assert.True(t, st.OldestDue.IsZero(), "nothing is due before every due time: %s", st.OldestDue)
			st, _ = f.stats(r, at(0))
			assert.True(t, st.OldestDue.Equal(at(-time.Hour)), "the oldest due job is the one due an hour ago: got %s", st.OldestDue)
			// A claimed job is no longer due: the next one is the oldest.
			f.claimOne(jobs[0].ID, "n1", at(0))
			st, _ = f.stats(r, at(0))
			assert.True(t, st.OldestDue.Equal(at(-time.Minute)), "a RUNNING job is not due: got %s", st.OldestDue)
		}},
		{"LeavesOutArchived", func(t tb, f *fixture) {
			r := capability[spi.StatsReader](f, "spi.StatsReader")
			a, ok := pick[spi.JobArchiver](f.s)
			if !ok {
				t.Skipf("store has no spi.JobArchiver")
			}
			jobs := f.insert(f.newJob(), f.newJob())
			c := f.claimOne(jobs[0].ID, "n1", at(0))
			require.Equal(t, []bool{true}, f.complete(succeeded(c, at(time.Second), nil, "")))
			require.Equal(t, 1, f.archive(a, at(time.Hour), 10))
			_, set := f.stats(r, at(0))
			assert.Equal(t, map[spi.JobCount]bool{{Status: spi.StatusPending, Task: "tck.task", Priority: spi.PriorityNormal, N: 1}: true}, set,
				"archived jobs are not counted")
		}},
	}
}
