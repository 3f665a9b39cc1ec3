package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestSkipRecordsBounded checks that a schedule keeps at least the latest
// spi.MaxSkipRecords skip records, and sheds the older in bulk.
func TestSkipRecordsBounded(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := s.CreateSchedule(ctx, spi.ScheduleRow{ID: "busy", TaskName: "t", Definition: []byte("{}"), NextFireAt: t0, CreatedAt: t0, UpdatedAt: t0})
	require.NoError(t, err)
	fires := spi.MaxSkipRecords*11/10 + 1
	for i := range fires {
		slot := t0.Add(time.Duration(i) * time.Minute)
		ok, _, err := s.FireSchedule(ctx, spi.ScheduleFire{ID: "busy", Version: int64(i + 1), NextFireAt: slot.Add(time.Minute),
			Skipped: 1, SkippedFrom: slot, SkippedTo: slot, Now: slot})
		require.NoError(t, err)
		require.True(t, ok)
	}
	all, err := s.ScheduleSkips(ctx, "busy", 10*spi.MaxSkipRecords)
	require.NoError(t, err)
	assert.Len(t, all, spi.MaxSkipRecords, "the older records were shed down to the latest MaxSkipRecords")
	assert.Equal(t, t0.Add(time.Duration(fires-1)*time.Minute), all[0].From, "the latest first")
	r, _, err := s.GetSchedule(ctx, "busy")
	require.NoError(t, err)
	assert.Equal(t, int64(fires), r.Skipped, "the count keeps every skipped slot")
}
