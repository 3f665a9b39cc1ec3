package dashboard

import (
	"context"
	"log/slog"
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
// a ring, for the overview's charts. Where the store keeps a history
// (spi.StatsSampleStore), the sampler records a sample at each minute's
// start into it, and starts its ring from the history of the ring's span:
// the charts outlive a restart, and every dashboard of the store draws
// the same history.
type sampler struct {
	read    func(ctx context.Context) (spi.JobStats, error)
	history spi.StatsSampleStore // nil: the ring only
	log     *slog.Logger
	now     func() time.Time
	every   time.Duration

	mu      sync.Mutex
	ring    []sample // oldest first, at most size
	size    int
	lastErr error
	taken   chan struct{} // closed and replaced at each sample (tests wait on it)
	// recorded is the minute of the last sample recorded in history.
	recorded time.Time
}

func newSampler(read func(ctx context.Context) (spi.JobStats, error), now func() time.Time, every time.Duration, size int) *sampler {
	return &sampler{read: read, now: now, every: every, size: size, taken: make(chan struct{}), log: slog.Default()}
}

// withHistory makes the sampler keep its samples in h (nil: none) and log
// the failures to log.
func (s *sampler) withHistory(h spi.StatsSampleStore, log *slog.Logger) *sampler {
	s.history, s.log = h, log
	return s
}

// run loads the history of the ring's span, samples at once, then at each
// multiple of the interval (so that a sample falls at each minute's start
// when the interval divides a minute) until ctx ends.
func (s *sampler) run(ctx context.Context) {
	s.load(ctx)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sampleOnce(ctx)
		t.Reset(s.untilTick())
	}
}

// untilTick is the time to the next multiple of the interval.
func (s *sampler) untilTick() time.Duration {
	return s.every - time.Duration(s.now().UnixNano()%int64(s.every))
}

// load starts the ring with the history of its span, where the store
// keeps one.
func (s *sampler) load(ctx context.Context) {
	if s.history == nil {
		return
	}
	span := time.Duration(s.size) * s.every
	got, err := s.history.StatsSamples(ctx, s.now().Add(-span), s.size)
	if err != nil {
		s.log.Warn("dashboard: the charts' history could not be read; they start empty", "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range got {
		s.ring = append(s.ring, sample{T: h.At, Counts: h.Counts})
	}
}

// sampleOnce reads the counts once and keeps them (or the error), and
// records them in the history when they are a minute's start's.
func (s *sampler) sampleOnce(ctx context.Context) {
	st, err := s.read(ctx)
	smp, ok := s.keep(st, err)
	if ok {
		s.record(ctx, smp)
	}
}

// keep puts the counts of st in the ring, or keeps err, and reports the
// sample it kept.
func (s *sampler) keep(st spi.JobStats, err error) (sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { close(s.taken); s.taken = make(chan struct{}) }()
	s.lastErr = err
	if err != nil {
		return sample{}, false
	}
	counts := map[spi.Status]int64{}
	for _, c := range st.Counts {
		counts[c.Status] += c.N
	}
	smp := sample{T: s.now().UTC(), Counts: counts}
	if n := len(s.ring); n > 0 && !smp.T.After(s.ring[n-1].T) {
		return sample{}, false // not after the history loaded (a clock behind the store's samples)
	}
	s.ring = append(s.ring, smp)
	if len(s.ring) > s.size {
		s.ring = append(s.ring[:0:0], s.ring[len(s.ring)-s.size:]...)
	}
	return smp, true
}

// recordWithin is how late after a minute's start a sample may be and
// still be recorded as that minute's: the sample of a tick on the minute,
// late by the scheduling of the sampler's goroutine.
const recordWithin = 5 * time.Second

// record keeps smp in the history when it is the sample of a minute's
// start (within recordWithin and half the interval) and this sampler has
// not recorded that minute yet. The first sample of a
// minute across every dashboard of the store is the one kept
// (spi.StatsSampleStore).
func (s *sampler) record(ctx context.Context, smp sample) {
	minute := smp.T.Truncate(time.Minute)
	if s.history == nil || minute.Equal(s.recorded) || smp.T.Sub(minute) >= min(recordWithin, max(s.every/2, time.Second)) {
		return
	}
	s.recorded = minute
	if _, err := s.history.RecordStatsSample(ctx, spi.StatsSample{At: minute, Counts: smp.Counts}); err != nil && ctx.Err() == nil {
		s.log.Warn("dashboard: a sample of the job counts could not be recorded in the charts' history", "err", err)
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
