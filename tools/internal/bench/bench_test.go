package bench_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/tools/internal/bench"
)

func TestBurndownWorksEveryJob(t *testing.T) {
	s := memory.New()
	var progress strings.Builder
	res, err := bench.Run(context.Background(), s, bench.Config{Jobs: 3000, Workers: 100, InsertBatch: 1000, Progress: &progress})
	require.NoError(t, err)
	assert.Equal(t, 3000, res.Jobs)
	assert.Positive(t, res.InsertRate())
	assert.Positive(t, res.WorkRate())
	for k, r := range res.QuarterRates {
		assert.Positive(t, r, "quarter %d", k+1)
	}
	assert.Regexp(t, regexp.MustCompile(`^insert \d+ jobs/s, work \d+ jobs/s; quarters \d+, \d+, \d+, \d+ jobs/s \(last / first \d+\.\d\d\)$`), res.Summary())
	assert.Regexp(t, regexp.MustCompile(`(?m)^quarters: \d+, \d+, \d+, \d+ jobs/s \(last / first \d+\.\d\d\)$`), progress.String())
	// The work's start has a line of its own, after the insert's: a CPU
	// meter's mark.
	assert.Regexp(t, regexp.MustCompile(`(?s)inserted 3000 jobs.*\nworking 3000 jobs\n.*worked 3000 jobs`), progress.String())
}

// listAll returns every job of s in id order (the order of submission).
func listAll(t *testing.T, s spi.Store) []*spi.Job {
	t.Helper()
	var all []*spi.Job
	var after uuid.UUID
	for {
		page, _, err := s.ListJobs(context.Background(), spi.ListParams{After: after, Limit: 1000})
		require.NoError(t, err)
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		after = page[len(page)-1].ID
	}
}

// With Tasks or Priorities, job i of every insert call (the last one
// shorter) has task i mod Tasks and priority i mod Priorities from LOWEST
// up, and every job is worked.
func TestBurndownInterleavesTasksAndPriorities(t *testing.T) {
	for _, tc := range []struct{ tasks, priorities int }{{3, 4}, {10, 5}, {2, 1}, {1, 3}} {
		t.Run(fmt.Sprintf("%d tasks, %d priorities", tc.tasks, tc.priorities), func(t *testing.T) {
			s := memory.New()
			const jobs, batch = 300, 70 // four calls of 70, one of 20
			res, err := bench.Run(context.Background(), s, bench.Config{Jobs: jobs, Workers: 20, InsertBatch: batch, Tasks: tc.tasks, Priorities: tc.priorities})
			require.NoError(t, err)
			assert.Equal(t, jobs, res.Jobs)
			all := listAll(t, s)
			require.Len(t, all, jobs)
			for k, j := range all {
				i := k % batch // the job's place in its call
				task, prio := "bench.noop", spi.PriorityNormal
				if tc.tasks > 1 {
					task = fmt.Sprintf("bench.noop.%d", i%tc.tasks)
				}
				if tc.priorities > 1 {
					prio = spi.Priority(i % tc.priorities)
				}
				require.Equal(t, task, j.TaskName, "job %d of call %d", i, k/batch+1)
				require.Equal(t, prio, j.Priority, "job %d of call %d", i, k/batch+1)
				require.Equal(t, spi.StatusSucceeded, j.Status)
			}
		})
	}
}

// AfterInsert runs once, with every job inserted and none worked yet,
// before the line that starts the work; its error fails the run.
func TestBurndownAfterInsert(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	var progress strings.Builder
	calls := 0
	res, err := bench.Run(ctx, s, bench.Config{Jobs: 500, Workers: 20, InsertBatch: 200, Progress: &progress,
		AfterInsert: func(ctx context.Context) error {
			calls++
			n, err := s.CountJobs(ctx, spi.ListParams{Status: spi.StatusPending}, 1<<30)
			require.NoError(t, err)
			assert.Equal(t, 500, n, "every job inserted and pending")
			assert.Contains(t, progress.String(), "inserted 500 jobs")
			assert.NotContains(t, progress.String(), "working")
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.Equal(t, 500, res.Jobs)

	_, err = bench.Run(ctx, memory.New(), bench.Config{Jobs: 10, AfterInsert: func(context.Context) error { return errors.New("no COPY") }})
	assert.ErrorContains(t, err, "after the insert: no COPY")
}

func TestSteadyReportsLatency(t *testing.T) {
	res, err := bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady, Rate: 500, Duration: 300 * time.Millisecond, Warmup: -1, Workers: 10})
	require.NoError(t, err)
	assert.Positive(t, res.Jobs)
	assert.LessOrEqual(t, res.LatencyP50, res.LatencyP99)
	assert.LessOrEqual(t, res.LatencyP99, res.LatencyMax)
	assert.Contains(t, res.Summary(), "latency p50")
}

func TestSteadyWarmupNotCounted(t *testing.T) {
	var out strings.Builder
	res, err := bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady, Rate: 1000, Duration: 300 * time.Millisecond,
		Warmup: 300 * time.Millisecond, Workers: 10, Progress: &out})
	require.NoError(t, err)
	// About 300 jobs in each phase: only the second's are counted.
	assert.Greater(t, res.Jobs, 200)
	assert.Less(t, res.Jobs, 420, "the warm-up's jobs are not in the figures")
	assert.Contains(t, out.String(), "after a warm-up of 300ms")
}

func TestSteadyOnTwoNodes(t *testing.T) {
	coord := engine.NewLocalCoordinator()
	made := 0
	res, err := bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady, Rate: 500, Duration: 300 * time.Millisecond,
		Workers: 10, TwoNodes: true, PollInterval: 5 * time.Second,
		Coordinator: func(context.Context) (spi.ClusterCoordinator, error) { made++; return coord, nil }})
	require.NoError(t, err)
	assert.Equal(t, 2, made, "a coordinator per node")
	assert.Positive(t, res.Jobs)
	assert.Less(t, res.LatencyMax, 5*time.Second, "every job woken, none left to a poll")

	res, err = bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady, Rate: 500, Duration: 200 * time.Millisecond,
		Workers: 10, TwoNodes: true})
	require.NoError(t, err, "polling alone")
	assert.Positive(t, res.Jobs)

	_, err = bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady,
		Coordinator: func(context.Context) (spi.ClusterCoordinator, error) { return coord, nil }})
	assert.ErrorContains(t, err, "two nodes")
	_, err = bench.Run(context.Background(), memory.New(), bench.Config{TwoNodes: true})
	assert.ErrorContains(t, err, "--mode steady only")
}

func TestBadConfig(t *testing.T) {
	_, err := bench.Run(context.Background(), memory.New(), bench.Config{Mode: "sideways"})
	assert.ErrorContains(t, err, `unknown --mode "sideways"`)
	_, err = bench.Run(context.Background(), memory.New(), bench.Config{Jobs: -1})
	assert.Error(t, err)
	_, err = bench.Run(context.Background(), memory.New(), bench.Config{Priorities: spi.NumPriorities + 1})
	assert.ErrorContains(t, err, "there are 5 priority levels")
	_, err = bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady, Priorities: 2})
	assert.ErrorContains(t, err, "--priorities is for --mode burndown only")
	_, err = bench.Run(context.Background(), memory.New(), bench.Config{Mode: bench.ModeSteady, Tasks: 2})
	assert.ErrorContains(t, err, "--tasks is for --mode burndown only")
}

func TestClaimScale(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	// Settle runs once per size, with that size's backlog written and
	// before any claim of it; a failure is reported and the timing goes
	// on.
	var settled []int
	var progress strings.Builder
	settle := func(ctx context.Context) error {
		n, err := store.CountJobs(ctx, spi.ListParams{Status: spi.StatusPending}, 1<<30)
		require.NoError(t, err)
		settled = append(settled, n)
		if len(settled) == 1 {
			return errors.New("no checkpoint here")
		}
		return nil
	}
	res, err := bench.Run(ctx, store, bench.Config{Mode: bench.ModeClaimScale, Jobs: 20000, InsertBatch: 5000, Settle: settle, Progress: &progress})
	require.NoError(t, err)
	assert.Equal(t, []int{10000, 100000}, settled, "pending jobs when each size settled")
	assert.Contains(t, progress.String(), "backlog 10000: settling the database failed, timing anyway: no checkpoint here")
	require.Len(t, res.ClaimTimes, 2)
	assert.Equal(t, []int{10000, 100000}, res.Backlogs)
	assert.Contains(t, res.Summary(), "pending, ratio")
	require.Len(t, res.NodeRSS, 2)
	if runtime.GOOS == "linux" {
		assert.Positive(t, res.NodeRSS[0], "the node's peak resident memory is read from /proc")
		assert.Contains(t, res.Summary(), "node peak RSS")
	}
	assert.Positive(t, res.NodeRates[1])
}

func TestMixedFleet(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	res, err := bench.Run(ctx, store, bench.Config{Mode: bench.ModeMixedFleet, Jobs: 1000, InsertBatch: 5000})
	require.NoError(t, err)
	require.Len(t, res.ClaimTimes, 2)
	assert.Equal(t, []int{0, 100000}, res.Backlogs)
	assert.Contains(t, res.Summary(), "jobs of another task pending")
	// The claims took only the bench task's jobs: every job of the other
	// task is still pending.
	var other int
	var after uuid.UUID
	for {
		page, next, err := store.ListJobs(ctx, spi.ListParams{Status: spi.StatusPending, After: after, Limit: 10000})
		require.NoError(t, err)
		for _, j := range page {
			if j.TaskName == "bench.other" {
				other++
			}
		}
		if next == uuid.Nil {
			break
		}
		after = next
	}
	assert.Equal(t, 100000, other)
}

func TestArchiveModeArchivesTheWorkedJobs(t *testing.T) {
	s := memory.New()
	// Two batches 100 ms apart: the jobs of the steady load wait during
	// the archive run (the memory store archives in microseconds).
	res, err := bench.Run(context.Background(), s, bench.Config{Mode: bench.ModeArchive, Jobs: 2000, Workers: 50,
		InsertBatch: 500, Rate: 200, Duration: 300 * time.Millisecond, ArchivePause: 100 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, 2000, res.Archived, "the worked jobs, not the steady ones")
	assert.Positive(t, res.BaseP99)
	assert.Positive(t, res.ArchiveP99)
	assert.Contains(t, res.Summary(), "archive 2000 jobs in")
	_, err = bench.Run(context.Background(), struct{ spi.Store }{memory.New()}, bench.Config{Mode: bench.ModeArchive, Jobs: 10})
	assert.ErrorContains(t, err, "has no archive")
}
