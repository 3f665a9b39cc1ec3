package oracle

import (
	"context"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestStatsSamplesAgainstTheFake runs the stats samples' methods against
// the fake: a record inserts the minute's row (its Unix seconds and the
// counts' JSON) and deletes the rows past the retention in one
// transaction, a duplicate key of the insert meaning that the minute has
// its sample; a read is one FETCH FIRST range of the primary key, leaving out the
// rows whose counts cannot be read.
func TestStatsSamplesAgainstTheFake(t *testing.T) {
	ctx := context.Background()
	f := &fakeDB{}
	var inserted, dropped, read []driver.NamedValue
	var duplicate bool
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		switch {
		case strings.HasPrefix(q, "INSERT INTO scheduler_stats_sample"):
			inserted = args
			if duplicate {
				return fakeResult{}, oraErr(1, "unique constraint (RATCHET.PK_SCHEDULER_STATS_SAMPLE) violated")
			}
		case strings.HasPrefix(q, "DELETE FROM scheduler_stats_sample"):
			dropped = args
		case strings.HasPrefix(q, "SELECT sample_minute"):
			read = args
			return fakeResult{Sets: []fakeSet{{Cols: []string{"sample_minute", "counts"}, Rows: [][]driver.Value{
				{t0.Unix(), `{"PENDING":5}`}, {t0.Unix() + 60, "not json"}, {t0.Unix() + 120, "{}"},
			}}}}, nil
		}
		return fakeResult{Affected: 1}, nil
	}
	s := fakeStore(t, f, Options{})
	at := t0.Add(17 * time.Second)
	const record = "INSERT INTO scheduler_stats_sample (sample_minute, counts) VALUES (:1, :2)"
	const drop = "DELETE FROM scheduler_stats_sample WHERE sample_minute < :1"

	kept, err := s.RecordStatsSample(ctx, spi.StatsSample{At: at, Counts: map[spi.Status]int64{spi.StatusPending: 5, spi.StatusFailed: 0}})
	require.NoError(t, err)
	assert.True(t, kept)
	assert.Equal(t, []string{"BEGIN", record, drop, "COMMIT"}, f.Statements())
	require.Len(t, inserted, 2)
	assert.Equal(t, t0.Unix(), inserted[0].Value, "the minute, in Unix seconds")
	assert.Equal(t, `{"PENDING":5}`, inserted[1].Value)
	require.Len(t, dropped, 1)
	assert.Equal(t, t0.Add(-spi.StatsSampleRetention).Unix(), dropped[0].Value)

	f.Reset()
	duplicate = true
	kept, err = s.RecordStatsSample(ctx, spi.StatsSample{At: at})
	require.NoError(t, err)
	assert.False(t, kept, "the minute has its sample")
	assert.Equal(t, []string{"BEGIN", record, drop, "COMMIT"}, f.Statements(), "the old samples are dropped all the same")

	f.Reset()
	got, err := s.StatsSamples(ctx, at, 0)
	require.NoError(t, err)
	assert.Equal(t, []spi.StatsSample{
		{At: t0, Counts: map[spi.Status]int64{spi.StatusPending: 5}},
		{At: t0.Add(2 * time.Minute), Counts: map[spi.Status]int64{}},
	}, got, "the unreadable row left out")
	assert.Equal(t, []string{"SELECT sample_minute, counts FROM scheduler_stats_sample WHERE sample_minute >= :1 ORDER BY sample_minute FETCH FIRST :2 ROWS ONLY"}, f.Statements())
	require.Len(t, read, 2)
	assert.Equal(t, t0.Unix(), read[0].Value, "from since's minute")
	assert.Equal(t, int64(1440), read[1].Value, "a day's minutes")
}
