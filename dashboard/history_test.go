package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// TestChartHistoryOutlivesARestart: a dashboard records the job counts of
// each minute's start in the store; a dashboard started later on the same
// store draws its charts from that history.
func TestChartHistoryOutlivesARestart(t *testing.T) {
	st := memory.New()
	c, err := ratchet.NewClient(st, ratchet.ClientOptions{})
	require.NoError(t, err)
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	_, err = c.SubmitRaw(t.Context(), "demo.send", []byte(`{}`))
	require.NoError(t, err)

	first := newEnvOn(t, st, c, func(o *dashboard.Options) { o.Now = func() time.Time { return t0 } })
	require.Eventually(t, func() bool {
		got, err := st.StatsSamples(t.Context(), t0, 0)
		return err == nil && len(got) == 1
	}, 10*time.Second, 5*time.Millisecond, "the first dashboard records the sample of 12:00")
	first.srv.Close()
	require.NoError(t, first.h.Close())

	later := t0.Add(20 * time.Minute)
	second := newEnvOn(t, st, c, func(o *dashboard.Options) { o.Now = func() time.Time { return later } })
	var out struct {
		Samples []struct {
			T      time.Time            `json:"t"`
			Counts map[spi.Status]int64 `json:"counts"`
		} `json:"samples"`
	}
	require.Eventually(t, func() bool {
		code, body, _ := second.do(nil, "GET", "/api/overview", nil, bearer(opToken))
		return code == http.StatusOK && json.Unmarshal([]byte(body), &out) == nil && len(out.Samples) == 2
	}, 10*time.Second, 5*time.Millisecond, "the second dashboard's samples: the history and its own")
	assert.Equal(t, t0, out.Samples[0].T.UTC(), "the first dashboard's sample, from the store")
	assert.Equal(t, int64(1), out.Samples[0].Counts[spi.StatusPending])
	assert.Equal(t, later, out.Samples[1].T.UTC())
}
