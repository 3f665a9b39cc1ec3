package dashboard

import (
	"context"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// sampleRing is how many samples the overview keeps (an hour at the
// default 10 s).
const sampleRing = 360

// sample is the job counts by status at one time.
type sample struct {
	T      time.Time
	Counts map[spi.Status]int64
}

// sampler reads the job counts every interval and keeps the last ones in
// a ring, for the overview's charts.
type sampler struct {
	read  func(ctx context.Context) (spi.JobStats, error)
	now   func() time.Time
	every time.Duration

	mu      sync.Mutex
	ring    []sample // oldest first, at most size
	size    int
	lastErr error
	taken   chan struct{} // closed and replaced at each sample (tests wait on it)
}

func newSampler(read func(ctx context.Context) (spi.JobStats, error), now func() time.Time, every time.Duration, size int) *sampler {
	return &sampler{read: read, now: now, every: every, size: size, taken: make(chan struct{})}
}

// run samples at once, then every interval until ctx ends.
func (s *sampler) run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.sampleOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleOnce reads the counts once and keeps them (or the error).
func (s *sampler) sampleOnce(ctx context.Context) {
	st, err := s.read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { close(s.taken); s.taken = make(chan struct{}) }()
	s.lastErr = err
	if err != nil {
		return
	}
	counts := map[spi.Status]int64{}
	for _, c := range st.Counts {
		counts[c.Status] += c.N
	}
	s.ring = append(s.ring, sample{T: s.now().UTC(), Counts: counts})
	if len(s.ring) > s.size {
		s.ring = append(s.ring[:0:0], s.ring[len(s.ring)-s.size:]...)
	}
}

// snapshot returns a copy of the ring and the last sample's error.
func (s *sampler) snapshot() ([]sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.ring...), s.lastErr
}

// next returns a channel closed at the next sample.
func (s *sampler) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// rate is one point of a per-minute rate.
type rate struct {
	T      time.Time
	PerMin float64
}

// rates returns, between consecutive samples, the increase of status's
// count per minute; a decrease (jobs archived or deleted) counts as 0.
func rates(ring []sample, status spi.Status) []rate {
	var out []rate
	for i := 1; i < len(ring); i++ {
		dt := ring[i].T.Sub(ring[i-1].T).Minutes()
		d := ring[i].Counts[status] - ring[i-1].Counts[status]
		if d < 0 || dt <= 0 {
			d = 0
		}
		v := 0.0
		if dt > 0 {
			v = float64(d) / dt
		}
		out = append(out, rate{T: ring[i].T, PerMin: v})
	}
	return out
}
