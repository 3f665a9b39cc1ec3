package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// WaitJob and Task.Wait return when the job has finished: its typed
// result, the error of a job that failed, ctx's error while it runs, and
// ErrNotFound for an unknown job.
func TestWaitForAResult(t *testing.T) {
	release := make(chan struct{})
	double := ratchet.NewTask("double", func(ctx context.Context, n int) (int, error) {
		if n < 0 {
			return 0, ratchet.DoNotRetry(errors.New("negative"))
		}
		if n == 0 {
			<-release
		}
		return 2 * n, nil
	})
	s := memory.New()
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}}, double)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	defer func() { close(release); _ = eng.Stop(context.Background()) }()
	// Another process's client: it learns of the end by reading the job.
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	ctx := context.Background()

	id, err := double.Submit(ctx, c, 21)
	require.NoError(t, err)
	got, err := double.Wait(ctx, c, id)
	require.NoError(t, err)
	assert.Equal(t, 42, got)

	bad, err := double.Submit(ctx, c, -1)
	require.NoError(t, err)
	_, err = double.Wait(ctx, c, bad)
	assert.ErrorIs(t, err, ratchet.ErrInvalidState)
	assert.ErrorContains(t, err, "ended FAILED: do not retry: negative")
	j, err := c.WaitJob(ctx, bad)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status)

	stuck, err := double.Submit(ctx, c, 0)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.WaitJob(short, stuck)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a running job: ctx's error")

	_, err = c.WaitJob(ctx, uuid.New())
	assert.ErrorIs(t, err, ratchet.ErrNotFound)
}
