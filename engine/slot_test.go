package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/stored"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A recurring job released at a graceful stop (or recovered after a crash)
// is due again at once, and its body still reads its slot: JobContext.Slot
// stays the time the schedule named while ScheduledAt moves.
func TestRecurringJobKeepsItsSlotWhenReleased(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	slot := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	seen := make(chan [2]time.Time, 1)
	report := ratchet.NewVoidTask("report", func(ctx context.Context, _ struct{}) error {
		jc, _ := ratchet.JobFromContext(ctx)
		s, ok := jc.Slot()
		if !ok {
			return errors.New("no slot")
		}
		seen <- [2]time.Time{s, jc.ScheduledAt}
		return nil
	})
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{Clock: clockwork.NewFakeClockAt(slot)})
	require.NoError(t, err)
	// The job a fire of schedule "daily" writes for the slot of 9:00.
	_, err = report.Submit(ctx, client, struct{}{}, ratchet.WithIdempotencyKey(stored.SlotKey("daily", slot)))
	require.NoError(t, err)
	claimed, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "old-node", Limit: 1, Now: slot.Add(time.Second)})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	released := slot.Add(2 * time.Minute) // the old node's graceful stop
	applied, err := store.ReleaseJobs(ctx, []spi.ClaimRef{{JobID: claimed[0].ID, ClaimSeq: claimed[0].ClaimSeq}}, released)
	require.NoError(t, err)
	require.Equal(t, []bool{true}, applied)

	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Clock: clockwork.NewFakeClockAt(released), Logger: quiet}}, report)
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	got := <-seen
	assert.Equal(t, slot, got[0].UTC(), "the slot")
	assert.Equal(t, released, got[1].UTC(), "the due time moved to the release")
}
