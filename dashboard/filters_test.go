package dashboard

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestFilters(t *testing.T) {
	q, err := url.ParseQuery("status=failed&task=mail&tag=eu&priority=HIGH,low&priority=4&error=Timeout&created_from=2026-12-01T00:00&created_before=2026-12-02T00:00:00Z&property=tenant=acme&archived=1")
	require.NoError(t, err)
	f := filtersOf(q)
	o, err := f.listOptions()
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, o.Status)
	assert.Equal(t, "mail", o.Task)
	assert.Equal(t, "eu", o.Tag)
	assert.Equal(t, []spi.Priority{spi.PriorityHigh, spi.PriorityLow, spi.PriorityCritical}, o.Priorities)
	assert.Equal(t, "Timeout", o.ErrorContains)
	assert.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), o.CreatedFrom)
	assert.Equal(t, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), o.CreatedBefore)
	assert.Equal(t, "tenant", o.PropertyKey)
	assert.Equal(t, "acme", o.PropertyValue)
	assert.True(t, o.IncludeArchived)
	assert.True(t, f.any())
	assert.Equal(t, f, filtersOf(f.values()), "a round trip through the query")
	assert.False(t, filtersOf(url.Values{"archived": {"1"}}).any(), "archived alone is no filter")

	for in, want := range map[string]string{
		"created_from=yesterday": `created_from "yesterday": not a time`,
		"property=novalue":       `property "novalue": want KEY=VALUE`,
		"status=DONE":            `status "DONE": not a job state`,
	} {
		q, _ := url.ParseQuery(in)
		_, err := filtersOf(q).listOptions()
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	_, _, err = pageOf(url.Values{"after": {"x"}})
	assert.ErrorContains(t, err, `after "x": not a job id`)
	_, _, err = pageOf(url.Values{"limit": {"0"}})
	assert.ErrorContains(t, err, `limit "0"`)

	assert.Equal(t, "10,000+", confirmData{Count: countCap, Capped: true}.CountText())
	assert.Equal(t, "12", confirmData{Count: 12}.CountText())
}
