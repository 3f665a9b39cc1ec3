package dashboard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
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
