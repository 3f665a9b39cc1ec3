package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// statsSampleCases check spi.StatsSampleStore: one sample per minute, the
// first kept, the old ones dropped, read back in order from since's minute.
func statsSampleCases() []testCase {
	record := func(t tb, f *fixture, ss spi.StatsSampleStore, s spi.StatsSample) bool {
		t.Helper()
		kept, err := ss.RecordStatsSample(f.ctx, s)
		require.NoError(t, err, "RecordStatsSample at %s", s.At)
		return kept
	}
	read := func(t tb, f *fixture, ss spi.StatsSampleStore, since time.Time, limit int) []spi.StatsSample {
		t.Helper()
		got, err := ss.StatsSamples(f.ctx, since, limit)
		require.NoError(t, err, "StatsSamples since %s", since)
		return got
	}
	counts := func(pending, succeeded int64) map[spi.Status]int64 {
		return map[spi.Status]int64{spi.StatusPending: pending, spi.StatusSucceeded: succeeded}
	}
	return []testCase{
		{"OnePerMinute", func(t tb, f *fixture) {
			ss := capability[spi.StatsSampleStore](f, "spi.StatsSampleStore")
			assert.Empty(t, read(t, f, ss, at(-time.Hour), 0), "a new store has no samples")
			// A time off UTC, within its minute: the sample is its minute's.
			first := at(10*time.Minute + 17*time.Second + 123*time.Microsecond).In(time.FixedZone("X", -7*3600))
			assert.True(t, record(t, f, ss, spi.StatsSample{At: first, Counts: counts(5, 1<<40)}), "the first sample of a minute is kept")
			assert.False(t, record(t, f, ss, spi.StatsSample{At: at(10*time.Minute + 59*time.Second), Counts: counts(9, 9)}),
				"a second sample of the same minute is not kept")
			assert.True(t, record(t, f, ss, spi.StatsSample{At: at(11 * time.Minute), Counts: map[spi.Status]int64{spi.StatusFailed: 2, spi.StatusRunning: 0}}))
			assert.True(t, record(t, f, ss, spi.StatsSample{At: at(12 * time.Minute), Counts: nil}), "a sample of an empty store")
			got := read(t, f, ss, at(0), 0)
			require.Len(t, got, 3, "three minutes sampled: %+v", got)
			assert.Equal(t, at(10*time.Minute), got[0].At, "the sample's minute, in UTC")
			assert.Equal(t, time.UTC, got[0].At.Location())
			assert.Equal(t, counts(5, 1<<40), got[0].Counts, "the minute's first sample, its counts whole")
			assert.Equal(t, at(11*time.Minute), got[1].At)
			assert.Equal(t, map[spi.Status]int64{spi.StatusFailed: 2}, got[1].Counts, "zero counts may be left out")
			assert.Equal(t, at(12*time.Minute), got[2].At)
			assert.Empty(t, got[2].Counts, "no counts")
		}},
		{"SinceAndLimit", func(t tb, f *fixture) {
			ss := capability[spi.StatsSampleStore](f, "spi.StatsSampleStore")
			for i := range 5 { // recorded newest first: read back oldest first
				m := 4 - i
				require.True(t, record(t, f, ss, spi.StatsSample{At: at(time.Duration(m) * time.Minute), Counts: counts(int64(m), 0)}))
			}
			minutes := func(got []spi.StatsSample) []time.Duration {
				out := []time.Duration{}
				for _, s := range got {
					out = append(out, s.At.Sub(base))
				}
				return out
			}
			assert.Equal(t, []time.Duration{2 * time.Minute, 3 * time.Minute, 4 * time.Minute},
				minutes(read(t, f, ss, at(2*time.Minute+30*time.Second), 0)), "since's minute and the later ones, oldest first")
			assert.Equal(t, []time.Duration{0, time.Minute}, minutes(read(t, f, ss, at(-time.Hour), 2)), "at most limit, the oldest")
			assert.Empty(t, read(t, f, ss, at(5*time.Minute), 0), "none at or after a later minute")
		}},
		{"Retention", func(t tb, f *fixture) {
			ss := capability[spi.StatsSampleStore](f, "spi.StatsSampleStore")
			require.True(t, record(t, f, ss, spi.StatsSample{At: at(0), Counts: counts(1, 0)}))
			require.True(t, record(t, f, ss, spi.StatsSample{At: at(time.Hour), Counts: counts(2, 0)}))
			require.True(t, record(t, f, ss, spi.StatsSample{At: at(spi.StatsSampleRetention), Counts: counts(3, 0)}))
			got := read(t, f, ss, at(-time.Hour), 0)
			require.Len(t, got, 3, "a sample exactly StatsSampleRetention old is kept: %+v", got)
			require.True(t, record(t, f, ss, spi.StatsSample{At: at(spi.StatsSampleRetention + time.Minute), Counts: counts(4, 0)}))
			got = read(t, f, ss, at(-time.Hour), 0)
			require.Len(t, got, 3, "the sample older than StatsSampleRetention is dropped: %+v", got)
			assert.Equal(t, at(time.Hour), got[0].At)
			assert.Equal(t, int64(4), got[2].Counts[spi.StatusPending])
		}},
	}
}
