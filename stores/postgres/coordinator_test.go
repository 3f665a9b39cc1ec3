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

	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh, Source: "node-a"}, firstWakeup(t, ca, got))
	require.NoError(t, cb.Close())
	require.NoError(t, cb.Close(), "closing twice is harmless")
}

// firstWakeup publishes HIGH wakeups from "node-a" through c until the
// listener that feeds got, which connects asynchronously, hears one, and
// returns it.
func firstWakeup(t *testing.T, c *Coordinator, got <-chan spi.WakeupHint) spi.WakeupHint {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		c.NotifyNewWork(context.Background(), spi.PriorityHigh, "node-a")
		select {
		case h := <-got:
			return h
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
	firstWakeup(t, ca, got)
	ctx := context.Background()
	ids := make([]uuid.UUID, spi.MaxNoticeIDs+2)
	for i := range ids {
		ids[i] = uuid.New()
	}
	ca.NotifyWatching(ctx, ids, "client-a")
	ca.NotifyFinished(ctx, ids[:1], "node-a")
	var watched []uuid.UUID
	var finished spi.WakeupHint
	for finished.Finished == nil {
		switch h := <-got; {
		case len(h.Watching) > 0:
			assert.LessOrEqual(t, len(h.Watching), spi.MaxNoticeIDs)
			assert.Equal(t, "client-a", h.Source)
			watched = append(watched, h.Watching...)
		case len(h.Finished) > 0:
			finished = h
		} // a wakeup of firstWakeup's still on its way passes
	}
	assert.Equal(t, ids, watched, "the watching notices arrive before the finished one, in order")
	assert.Equal(t, spi.WakeupHint{Source: "node-a", Finished: ids[:1]}, finished)
}
