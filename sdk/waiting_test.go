package ratchet_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// JobDetail says why a job that has not finished waits: paused before
// scheduled, scheduled before ready; nil once it runs.
func TestJobDetailWaiting(t *testing.T) {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	store := memory.New()
	c, err := ratchet.NewClient(store, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	later, err := bill.Submit(ctx, c, Invoice{Cents: 1}, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	now, err := bill.Submit(ctx, c, Invoice{Cents: 2}, ratchet.WithResource("pdf", 2))
	require.NoError(t, err)
	kind := func(id uuid.UUID) (ratchet.WaitKind, string) {
		d, err := c.JobDetail(ctx, id)
		require.NoError(t, err)
		if d.Waiting == nil {
			return "", ""
		}
		return d.Waiting.Kind, d.Waiting.Detail
	}
	k, detail := kind(later)
	assert.Equal(t, ratchet.WaitingScheduled, k)
	assert.Contains(t, detail, "due in 1h0m0s")
	k, detail = kind(now)
	assert.Equal(t, ratchet.WaitingReady, k)
	assert.Contains(t, detail, "a free permit of pdf (at most 2 running)")

	require.NoError(t, c.PauseTask(ctx, bill.Name()))
	k, detail = kind(later)
	assert.Equal(t, ratchet.WaitingPaused, k, "a paused task's job says so before its due time")
	assert.Contains(t, detail, "task invoice.bill is paused (since 2026-12-07T10:00:00Z)")
}
