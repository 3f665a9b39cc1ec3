package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A paused task's jobs wait PENDING, whatever the node polls, while the
// other tasks run; submissions are accepted; resumed, they run at once
// (the resume wakes the node).
func TestPauseTask(t *testing.T) {
	report := ratchet.NewVoidTask("report", func(context.Context, int) error { return nil })
	email := ratchet.NewVoidTask("email", func(context.Context, int) error { return nil })
	r := start(t, engine.Options{}, report, email)
	ctx := context.Background()
	require.NoError(t, r.client.PauseTask(ctx, "report"))
	require.NoError(t, r.client.PauseTask(ctx, "report"), "pausing a paused task is no error")
	paused, err := r.client.PausedTasks(ctx)
	require.NoError(t, err)
	require.Len(t, paused, 1)
	assert.Equal(t, "report", paused[0].Task)
	assert.Equal(t, t0, paused[0].Since, "on the client's clock")

	held, err := report.Submit(ctx, r.client, 1)
	require.NoError(t, err, "a paused task still takes submissions")
	other, err := email.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(other).Kind, "the other task runs")
	r.advanceTo(t0.Add(time.Minute))
	assert.Equal(t, spi.StatusPending, r.job(held).Status, "the paused task's job waits")

	require.NoError(t, r.client.ResumeTask(ctx, "report"))
	require.Equal(t, engine.EventSucceeded, r.next(held).Kind, "resumed, it runs")
	paused, err = r.client.PausedTasks(ctx)
	require.NoError(t, err)
	assert.Empty(t, paused)
	assert.ErrorIs(t, r.client.PauseTask(ctx, ""), ratchet.ErrInvalidArgument)
}
