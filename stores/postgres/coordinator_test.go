package postgres

import (
	"context"
	"testing"
	"time"

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
