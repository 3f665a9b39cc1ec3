package mysql_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
)

// TestConcurrentStatsSamples records the same minutes from several
// stores at once, as the dashboards of several processes do: MySQL has no
// ON CONFLICT, so the insert of a minute that another store took first
// fails on the primary key, which means "not kept", never an error; and
// each minute is kept once.
func TestConcurrentStatsSamples(t *testing.T) {
	dsn, database := dbtest.MySQL(t)
	const stores, minutes = 4, 20
	var all []*mysql.Store
	for range stores {
		s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: database, ApplyMigrations: true, MaxConns: 4})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		all = append(all, s)
	}
	base := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	// A day and more of old samples, which every record deletes.
	for m := range 5 {
		_, err := all[0].RecordStatsSample(t.Context(), spi.StatsSample{At: base.Add(-spi.StatsSampleRetention - time.Duration(m+1)*time.Minute)})
		require.NoError(t, err)
	}
	kept := make([][minutes]bool, stores)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range all {
		wg.Go(func() {
			<-start
			for m := range minutes {
				k, err := s.RecordStatsSample(t.Context(), spi.StatsSample{At: base.Add(time.Duration(m) * time.Minute),
					Counts: map[spi.Status]int64{spi.StatusPending: int64(i)}})
				assert.NoError(t, err, "store %d, minute %d", i, m)
				kept[i][m] = k
			}
		})
	}
	close(start)
	wg.Wait()
	got, err := all[0].StatsSamples(t.Context(), base.Add(-2*spi.StatsSampleRetention), 0)
	require.NoError(t, err)
	require.Len(t, got, minutes, "one sample per minute, the old ones dropped")
	for m, smp := range got {
		assert.Equal(t, base.Add(time.Duration(m)*time.Minute), smp.At)
		n := 0
		for i := range stores {
			if kept[i][m] {
				n++
				assert.Equal(t, int64(i), smp.Counts[spi.StatusPending], "minute %d holds the sample of the store that kept it", m)
			}
		}
		assert.Equal(t, 1, n, "minute %d kept by one store", m)
	}
}
