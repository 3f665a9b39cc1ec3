package engine

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// TestArchiverMovesOldJobs runs the archiver service at its cron slot:
// jobs finished longer than the retention ago move to the archive, where
// the client still finds them; a recent one stays live.
func TestArchiverMovesOldJobs(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(t0)
	store := memory.New()
	c, err := ratchet.NewClient(store, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	finish := func(at time.Time) *spi.Job {
		j := &spi.Job{ID: c.NewJobID(), TaskName: "t", Status: spi.StatusPending, ScheduledAt: at, CreatedAt: at, MaxRetries: 1}
		_, err := store.InsertJobs(ctx, []*spi.Job{j}, spi.InsertOptions{})
		require.NoError(t, err)
		got, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: at})
		require.NoError(t, err)
		require.Len(t, got, 1)
		_, err = store.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: got[0].ClaimSeq},
			Outcome: spi.OutcomeSucceeded, FinishedAt: at}})
		require.NoError(t, err)
		return j
	}
	old := finish(t0.Add(-3 * 24 * time.Hour))
	recent := finish(t0.Add(-time.Hour))
	sched, err := cronexpr.Parse("0 0 3 * * ?", "")
	require.NoError(t, err)
	a := archiver(store, sched, ArchiveOptions{Retention: 24 * time.Hour, BatchSize: 10})
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- a.Run(runCtx, ServiceHost{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the archiver waits for its slot")
	clock.Advance(3 * time.Hour) // 03:00: the slot
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "and then for the next one")
	cancel()
	require.NoError(t, <-ran)

	_, err = store.GetJob(ctx, old.ID)
	assert.ErrorIs(t, err, spi.ErrNotFound, "the old job left the live jobs")
	j, err := c.GetJob(ctx, old.ID)
	require.NoError(t, err, "the client finds an archived job")
	assert.Equal(t, spi.StatusSucceeded, j.Status)
	live, err := c.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	require.Len(t, live.Jobs, 1)
	assert.Equal(t, recent.ID, live.Jobs[0].ID, "a job within the retention stays live")
	all, err := c.ListJobs(ctx, ratchet.ListOptions{IncludeArchived: true})
	require.NoError(t, err)
	require.Len(t, all.Jobs, 2, "with the archive")
	assert.Equal(t, old.ID, all.Jobs[0].ID, "merged in id order")
	page, err := c.ListJobs(ctx, ratchet.ListOptions{IncludeArchived: true, Limit: 1})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	page, err = c.ListJobs(ctx, ratchet.ListOptions{IncludeArchived: true, Limit: 1, After: page.Next})
	require.NoError(t, err)
	assert.Equal(t, recent.ID, page.Jobs[0].ID, "pages across live and archived jobs")
}

// The engine runs the archiver where the store can archive and grant
// leases, not when it is disabled.
func TestArchiverIsWired(t *testing.T) {
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	names := func(o Options) []string {
		e, err := New(memory.New(), o, task)
		require.NoError(t, err)
		var out []string
		for _, s := range e.services {
			out = append(out, s.Name())
		}
		return out
	}
	assert.Contains(t, names(Options{}), "archiver")
	assert.NotContains(t, names(Options{Archive: ArchiveOptions{Disabled: true}}), "archiver")
	assert.Contains(t, names(Options{Archive: ArchiveOptions{Disabled: true}}), "log-retention", "log retention runs without archiving")
	assert.NotContains(t, names(Options{JobLogs: JobLogOptions{Disabled: true}}), "log-retention")
	_, err := New(memory.New(), Options{Archive: ArchiveOptions{Disabled: true, Cron: "61 * * * *"}}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "a malformed Archive.Cron is refused: the log retention runs on it")
}

// TestLogSweeperDeletesOldLines runs the log retention service at its
// slot: lines older than the retention go, in batches, recent ones stay.
func TestLogSweeperDeletesOldLines(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(t0)
	store := memory.New()
	var jobs []*spi.Job
	for i := range 5 {
		j := &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Status: spi.StatusPending, ScheduledAt: t0, CreatedAt: t0, MaxRetries: 1}
		_, err := store.InsertJobs(ctx, []*spi.Job{j}, spi.InsertOptions{})
		require.NoError(t, err)
		got, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: t0})
		require.NoError(t, err)
		require.Len(t, got, 1)
		lines := []spi.LogLine{{Line: 0, Time: t0.Add(-40 * 24 * time.Hour), Level: "INFO", Message: "old"},
			{Line: 1, Time: t0.Add(-time.Duration(i) * time.Hour), Level: "INFO", Message: "recent"}}
		_, err = store.AppendJobLogs(ctx, []spi.LogAppend{{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: got[0].ClaimSeq}, Lines: lines}})
		require.NoError(t, err)
		jobs = append(jobs, j)
	}
	sched, err := cronexpr.Parse("0 0 3 * * ?", "")
	require.NoError(t, err)
	s := logSweeper(store, sched, 30*24*time.Hour, 2)
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- s.Run(runCtx, ServiceHost{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the sweeper waits for its slot")
	clock.Advance(3 * time.Hour)
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "and then for the next one")
	cancel()
	require.NoError(t, <-ran)
	for _, j := range jobs {
		lines, err := store.JobLogs(ctx, j.ID, spi.LogCursor{}, 10)
		require.NoError(t, err)
		if assert.Len(t, lines, 1, "every old line went, batch after batch") {
			assert.Equal(t, "recent", lines[0].Message)
		}
	}
}

// TestArchiverPurgesArchivedJobs runs the archiver at its slot with and
// without PurgeAfter: with it, an archived job finished longer than
// PurgeAfter ago is deleted for good with its log, after the run's move;
// one finished more recently stays archived. With 0, every archived job
// stays.
func TestArchiverPurgesArchivedJobs(t *testing.T) {
	for _, purgeAfter := range []time.Duration{30 * 24 * time.Hour, 0} {
		t.Run(purgeAfter.String(), func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			clock := clockwork.NewFakeClockAt(t0)
			store := memory.New()
			finish := func(at time.Time) *spi.Job {
				j := &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Status: spi.StatusPending, ScheduledAt: at, CreatedAt: at, MaxRetries: 1}
				_, err := store.InsertJobs(ctx, []*spi.Job{j}, spi.InsertOptions{})
				require.NoError(t, err)
				got, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: at})
				require.NoError(t, err)
				require.Len(t, got, 1)
				ref := spi.ClaimRef{JobID: j.ID, ClaimSeq: got[0].ClaimSeq}
				_, err = store.AppendJobLogs(ctx, []spi.LogAppend{{ClaimRef: ref, Lines: []spi.LogLine{{Time: at, Level: "INFO", Message: "ran"}}}})
				require.NoError(t, err)
				_, err = store.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref, Outcome: spi.OutcomeSucceeded, FinishedAt: at}})
				require.NoError(t, err)
				return j
			}
			ancient := finish(t0.Add(-40 * 24 * time.Hour))
			old := finish(t0.Add(-3 * 24 * time.Hour))
			sched, err := cronexpr.Parse("0 0 3 * * ?", "")
			require.NoError(t, err)
			a := archiver(store, sched, ArchiveOptions{Retention: 24 * time.Hour, BatchSize: 10, PurgeAfter: purgeAfter})
			runCtx, cancel := context.WithCancel(ctx)
			ran := make(chan error, 1)
			go func() {
				ran <- a.Run(runCtx, ServiceHost{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			}()
			require.NoError(t, clock.BlockUntilContext(ctx, 1), "the archiver waits for its slot")
			clock.Advance(3 * time.Hour)
			require.NoError(t, clock.BlockUntilContext(ctx, 1), "and then for the next one")
			cancel()
			require.NoError(t, <-ran)

			for _, j := range []*spi.Job{ancient, old} {
				_, err := store.GetJob(ctx, j.ID)
				assert.ErrorIs(t, err, spi.ErrNotFound, "the job left the live jobs")
			}
			_, err = store.GetArchivedJob(ctx, old.ID)
			assert.NoError(t, err, "a job finished within PurgeAfter stays archived")
			_, err = store.GetArchivedJob(ctx, ancient.ID)
			lines, lerr := store.JobLogs(ctx, ancient.ID, spi.LogCursor{}, 10)
			require.NoError(t, lerr)
			if purgeAfter > 0 {
				assert.ErrorIs(t, err, spi.ErrNotFound, "a job finished longer than PurgeAfter ago is purged at the slot")
				assert.Empty(t, lines, "with its log")
			} else {
				assert.NoError(t, err, "without PurgeAfter archived jobs are kept forever")
				assert.Len(t, lines, 1, "with their logs")
			}
		})
	}
}
