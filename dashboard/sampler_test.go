package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

func TestSamplerRingAndRates(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	now := t0
	succeeded := []int64{10, 40, 25, 85} // 25: jobs archived meanwhile
	var fail error
	i := 0
	s := newSampler(func(context.Context) (spi.JobStats, error) {
		if fail != nil {
			return spi.JobStats{}, fail
		}
		n := succeeded[i]
		i++
		return spi.JobStats{Counts: []spi.JobCount{{Status: spi.StatusSucceeded, Task: "a", N: n - 1}, {Status: spi.StatusSucceeded, Task: "b", N: 1},
			{Status: spi.StatusFailed, Task: "a", N: int64(i)}}}, nil
	}, func() time.Time { return now }, 10*time.Second, 3)
	for range succeeded {
		s.sampleOnce(context.Background())
		now = now.Add(30 * time.Second)
	}
	ring, err := s.snapshot()
	require.NoError(t, err)
	require.Len(t, ring, 3, "the ring keeps the last 3")
	assert.Equal(t, t0.Add(30*time.Second), ring[0].T)
	assert.Equal(t, []rate{{t0.Add(60 * time.Second), 0}, {t0.Add(90 * time.Second), 120}}, rates(ring, spi.StatusSucceeded))
	assert.Equal(t, []rate{{t0.Add(60 * time.Second), 2}, {t0.Add(90 * time.Second), 2}}, rates(ring, spi.StatusFailed))

	fail = errors.New("down")
	next := s.next()
	s.sampleOnce(context.Background())
	<-next
	ring, err = s.snapshot()
	assert.ErrorContains(t, err, "down")
	assert.Len(t, ring, 3, "a failed sample keeps the ring")
}

func TestSamplerRunsAtOnceAndStops(t *testing.T) {
	calls := make(chan struct{}, 10)
	s := newSampler(func(context.Context) (spi.JobStats, error) {
		calls <- struct{}{}
		return spi.JobStats{}, nil
	}, time.Now, time.Hour, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.run(ctx); close(done) }()
	<-calls // the first sample, at once
	cancel()
	<-done
}

// TestSamplerKeepsAHistory: the sample of each minute's start goes into
// the store's history (once per minute, and only a sample within the
// first seconds of its minute), and a new sampler starts its ring from
// the history of its span.
func TestSamplerKeepsAHistory(t *testing.T) {
	st := memory.New()
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	now := t0
	n := int64(0)
	read := func(context.Context) (spi.JobStats, error) {
		n += 60
		return spi.JobStats{Counts: []spi.JobCount{{Status: spi.StatusSucceeded, Task: "a", N: n}}}, nil
	}
	clock := func() time.Time { return now }
	s := newSampler(read, clock, 10*time.Second, 360).withHistory(st, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	for _, at := range []time.Duration{0, 10 * time.Second, 61 * time.Second, 70 * time.Second, 127 * time.Second, 180 * time.Second} {
		now = t0.Add(at)
		s.sampleOnce(ctx)
	}
	got, err := st.StatsSamples(ctx, t0.Add(-time.Hour), 0)
	require.NoError(t, err)
	require.Len(t, got, 3, "12:00:00, 12:01:01 and 12:03:00 recorded; 12:02:07 is too late in its minute: %+v", got)
	assert.Equal(t, []time.Time{t0, t0.Add(time.Minute), t0.Add(3 * time.Minute)}, []time.Time{got[0].At, got[1].At, got[2].At})
	assert.Equal(t, map[spi.Status]int64{spi.StatusSucceeded: 60}, got[0].Counts, "the first sample of 12:00, not the one of 12:00:10")
	assert.Equal(t, int64(180), got[1].Counts[spi.StatusSucceeded])

	// A restart: the new sampler's ring starts with the history of its
	// span (an hour at 10 s), then goes on with its own samples.
	now = t0.Add(3*time.Minute + 30*time.Second)
	s2 := newSampler(read, clock, 10*time.Second, 360).withHistory(st, slog.New(slog.DiscardHandler))
	s2.load(ctx)
	s2.sampleOnce(ctx)
	ring, err := s2.snapshot()
	require.NoError(t, err)
	require.Len(t, ring, 4, "three minutes of history and the new sample: %+v", ring)
	assert.Equal(t, t0, ring[0].T)
	assert.Equal(t, now, ring[3].T)
	assert.Equal(t, []rate{{t0.Add(time.Minute), 120}, {t0.Add(3 * time.Minute), 90}, {now, 120}}, rates(ring, spi.StatusSucceeded),
		"rates across the history and the new samples")

	// A sampler whose span is shorter reads only its span.
	s3 := newSampler(read, clock, 10*time.Second, 6).withHistory(st, slog.New(slog.DiscardHandler))
	s3.load(ctx)
	ring, _ = s3.snapshot()
	require.Len(t, ring, 1, "a minute of span: the sample of 12:03 only: %+v", ring)
}

// TestSamplerTicksOnTheInterval: after its first sample, the sampler waits
// for the next multiple of its interval, so a minute's start is sampled.
func TestSamplerTicksOnTheInterval(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 7, 250_000_000, time.UTC)
	s := newSampler(nil, func() time.Time { return now }, 10*time.Second, 10)
	assert.Equal(t, 2750*time.Millisecond, s.untilTick())
	now = now.Add(2750 * time.Millisecond)
	assert.Equal(t, 10*time.Second, s.untilTick(), "on a tick: the next one")
}
