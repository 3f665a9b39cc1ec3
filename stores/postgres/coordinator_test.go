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

func TestCoordinatorCarriesWakeupsBetweenStores(t *testing.T) {
	dsn, schema := testDB(t)
	a := openSchema(t, dsn, schema)
	b := openSchema(t, dsn, schema)
	ca, cb := a.Coordinator(), b.Coordinator()
	defer ca.Close()
	defer cb.Close()
	got := make(chan spi.WakeupHint, 100)
	cb.RegisterWakeupListener(func(h spi.WakeupHint) { got <- h })

	ctx := context.Background()
	deadline := time.After(20 * time.Second)
	// The listener connects asynchronously: publish until a hint arrives.
	for {
		ca.NotifyNewWork(ctx, spi.PriorityHigh, "node-a")
		select {
		case h := <-got:
			assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh, Source: "node-a"}, h)
			require.NoError(t, cb.Close())
			require.NoError(t, cb.Close(), "closing twice is harmless")
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no wakeup crossed from one coordinator to the other")
		}
	}
}

// WaitJob's notices cross too: a long list of watched ids in chunks of
// spi.MaxNoticeIDs, and a finished one.
func TestCoordinatorCarriesWaitJobNotices(t *testing.T) {
	dsn, schema := testDB(t)
	a := openSchema(t, dsn, schema)
	b := openSchema(t, dsn, schema)
	ca, cb := a.Coordinator(), b.Coordinator()
	defer ca.Close()
	defer cb.Close()
	got := make(chan spi.WakeupHint, 100)
	cb.RegisterWakeupListener(func(h spi.WakeupHint) { got <- h })
	ctx := context.Background()
	deadline := time.After(20 * time.Second)
	for connected := false; !connected; { // the listener connects asynchronously
		ca.NotifyNewWork(ctx, spi.PriorityHigh, "node-a")
		select {
		case <-got:
			connected = true
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no wakeup crossed from one coordinator to the other")
		}
	}
	ids := make([]uuid.UUID, spi.MaxNoticeIDs+2)
	for i := range ids {
		ids[i] = uuid.New()
	}
	ca.NotifyWatching(ctx, ids, "client-a")
	ca.NotifyFinished(ctx, ids[:1], "node-a")
	var watched []uuid.UUID
	for len(watched) < len(ids) {
		h := <-got
		require.NotEmpty(t, h.Watching, "the watching notices come first, in order")
		assert.LessOrEqual(t, len(h.Watching), spi.MaxNoticeIDs)
		assert.Equal(t, "client-a", h.Source)
		watched = append(watched, h.Watching...)
	}
	assert.Equal(t, ids, watched)
	assert.Equal(t, spi.WakeupHint{Source: "node-a", Finished: ids[:1]}, <-got)
}
