package spi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestNodeReportBounds checks the bounds of a node's stored report: at
// most MaxNodeReportBreakers breakers and MaxNodeReportBytes of JSON, the
// breakers left out counted, and a report within them round-trips.
func TestNodeReportBounds(t *testing.T) {
	started := time.Date(2030, 1, 1, 0, 0, 0, 5, time.FixedZone("x", 3600))
	small := spi.NodeReport{Version: "v1", Concurrency: 2, Running: 1, StartedAt: started,
		Breakers: []spi.NodeBreaker{{Service: "s", State: "OPEN", OpenFor: time.Second, WaitDuration: time.Minute}}}
	got, err := spi.DecodeNodeReport(spi.EncodeNodeReport(small))
	require.NoError(t, err)
	assert.True(t, got.StartedAt.Equal(started))
	assert.Equal(t, time.UTC, got.StartedAt.Location(), "UTC")
	got.StartedAt = small.StartedAt
	assert.Equal(t, small, *got)

	many := spi.NodeReport{Breakers: make([]spi.NodeBreaker, 150)}
	got, err = spi.DecodeNodeReport(spi.EncodeNodeReport(many))
	require.NoError(t, err)
	assert.Len(t, got.Breakers, spi.MaxNodeReportBreakers)
	assert.Equal(t, 50, got.BreakersLeftOut)

	long := spi.NodeReport{Version: strings.Repeat("v", 1000), Breakers: make([]spi.NodeBreaker, 100)}
	for i := range long.Breakers {
		long.Breakers[i].Service = strings.Repeat("n", 2000)
	}
	enc := spi.EncodeNodeReport(long)
	assert.LessOrEqual(t, len(enc), spi.MaxNodeReportBytes)
	got, err = spi.DecodeNodeReport(enc)
	require.NoError(t, err)
	assert.NotEmpty(t, got.Breakers, "as many breakers as fit")
	assert.Equal(t, 100, len(got.Breakers)+got.BreakersLeftOut, "the others counted")
	assert.Less(t, len(got.Version), 1000, "the version is clipped")

	_, err = spi.DecodeNodeReport("not json")
	assert.Error(t, err)
}
