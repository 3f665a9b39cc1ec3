package ferrettest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mongodb"
)

// TestStatsSamplesLeaveOutUnreadable plants documents in the samples
// collection that are not a sample's stored form (counts that are not
// JSON, a number, none): StatsSamples leaves them out and returns the
// readable ones around them.
func TestStatsSamplesLeaveOutUnreadable(t *testing.T) {
	srv := startFerret(t)
	s := openStore(t, srv)
	for i := range 5 {
		_, err := s.RecordStatsSample(t.Context(), spi.StatsSample{At: base.Add(time.Duration(i) * time.Minute),
			Counts: map[spi.Status]int64{spi.StatusPending: int64(i + 1)}})
		require.NoError(t, err)
	}
	coll := s.Database().Collection(mongodb.DefaultCollectionPrefix + "samples")
	minute := func(i int) int64 { return base.Add(time.Duration(i) * time.Minute).Unix() }
	for _, u := range []bson.M{
		{"_id": minute(1), "counts": "{not json"},
		{"_id": minute(2), "counts": int64(7)},
		{"_id": minute(3), "other": "x"},
	} {
		r, err := coll.ReplaceOne(t.Context(), bson.M{"_id": u["_id"]}, u)
		require.NoError(t, err)
		require.Equal(t, int64(1), r.MatchedCount)
	}
	got, err := s.StatsSamples(t.Context(), base, 0)
	require.NoError(t, err)
	require.Len(t, got, 2, "the readable samples: %+v", got)
	assert.Equal(t, base, got[0].At)
	assert.Equal(t, map[spi.Status]int64{spi.StatusPending: 1}, got[0].Counts)
	assert.Equal(t, base.Add(4*time.Minute), got[1].At)
	assert.Equal(t, map[spi.Status]int64{spi.StatusPending: 5}, got[1].Counts)
}

// TestStatsSamplesOneKeeperPerMinute records one minute from several
// stores (as several dashboards sampling) at once: exactly one keeps its
// sample, and that is the one read back.
func TestStatsSamplesOneKeeperPerMinute(t *testing.T) {
	srv := startFerret(t)
	s := openStore(t, srv)
	const writers = 6
	kept := make([]bool, writers)
	var wg sync.WaitGroup
	for i := range writers {
		o, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: s.Database().Name()})
		require.NoError(t, err)
		defer o.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := o.RecordStatsSample(t.Context(), spi.StatsSample{At: base.Add(time.Duration(i) * time.Second),
				Counts: map[spi.Status]int64{spi.StatusRunning: int64(i + 1)}})
			if assert.NoError(t, err) {
				kept[i] = k
			}
		}()
	}
	wg.Wait()
	keeper := -1
	for i, k := range kept {
		if k {
			assert.Equal(t, -1, keeper, "a second keeper: %d after %d", i, keeper)
			keeper = i
		}
	}
	require.NotEqual(t, -1, keeper, "no store kept its sample")
	got, err := s.StatsSamples(t.Context(), base, 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, map[spi.Status]int64{spi.StatusRunning: int64(keeper + 1)}, got[0].Counts, "the keeper's sample")
}
