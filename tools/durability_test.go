package tools_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

type note struct {
	Text string `json:"text"`
}

var echo = ratchet.NewTask("echo", func(ctx context.Context, n note) (string, error) { return n.Text, nil })

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestSQLiteDurabilityAcrossRestart: jobs submitted before a close are there
// after reopening, and a job that was RUNNING when its process died is
// recovered at the next start and finished, charged one crash.
func TestSQLiteDurabilityAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ratchet.db")
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(t0)

	// First process: submit three jobs, then "die" holding one of them.
	s, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	require.NoError(t, err)
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	ids, err := echo.SubmitMany(ctx, c, []note{{"a"}, {"b"}})
	require.NoError(t, err)
	later, err := echo.Submit(ctx, c, note{"later"}, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	require.NoError(t, s.Heartbeat(ctx, "node-a", t0))
	claimed, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "node-a", Limit: 1, Now: t0})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	require.NoError(t, s.Close()) // no release: the process died

	// Second process, another node id: the dead node's job is recovered once
	// its heartbeat is older than the grace period.
	s, err = sqlite.Open(ctx, path, sqlite.Options{Create: true})
	require.NoError(t, err)
	defer s.Close()
	for _, id := range append(ids, later) {
		j, err := s.GetJob(ctx, id)
		require.NoError(t, err, "job %s survived the restart", id)
		assert.Equal(t, "echo", j.TaskName)
	}
	j, err := s.GetJob(ctx, claimed[0].ID)
	require.NoError(t, err)
	require.Equal(t, spi.StatusRunning, j.Status, "still RUNNING until recovered")

	clock.Advance(2 * time.Minute) // past the 60 s grace
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}, NodeID: "node-b"}, echo)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(10)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()
	done := map[uuid.UUID]engine.Event{}
	for len(done) < 2 {
		ev := <-events
		done[ev.JobID] = ev
	}
	for _, id := range ids {
		require.Equal(t, engine.EventSucceeded, done[id].Kind)
		j, err := s.GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusSucceeded, j.Status)
		res, err := echo.Result(eng.Client(), j)
		require.NoError(t, err)
		assert.Contains(t, []string{"a", "b"}, res)
	}
	j, err = s.GetJob(ctx, claimed[0].ID)
	require.NoError(t, err)
	assert.Equal(t, 1, j.CrashCount, "the crash was charged once")
	j, err = s.GetJob(ctx, later)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status, "the delayed job waits for its time")
	assert.Equal(t, t0.Add(time.Hour), j.ScheduledAt)
}
