package memory

import (
	"context"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.StatsSampleStore = (*Store)(nil)

// RecordStatsSample implements spi.StatsSampleStore: the samples are kept
// by minute in their stored form (spi.EncodeStatsCounts), as a database
// does.
func (s *Store) RecordStatsSample(_ context.Context, smp spi.StatsSample) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	minute := smp.Minute().Unix()
	_, had := s.samples[minute]
	if !had || s.bug("a later sample replaces its minute's") {
		s.samples[minute] = spi.EncodeStatsCounts(smp.Counts)
	}
	cut := smp.Minute().Add(-spi.StatsSampleRetention).Unix()
	for m := range s.samples {
		if m < cut && !s.bug("old samples are kept") {
			delete(s.samples, m)
		}
	}
	return !had, nil
}

// StatsSamples implements spi.StatsSampleStore.
func (s *Store) StatsSamples(_ context.Context, since time.Time, limit int) ([]spi.StatsSample, error) {
	if limit <= 0 {
		limit = int(spi.StatsSampleRetention / time.Minute)
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	from := since.UTC().Truncate(time.Minute).Unix()
	var minutes []int64
	for m := range s.samples {
		if m > from || (m == from && !s.bug("StatsSamples leaves out since's minute")) {
			minutes = append(minutes, m)
		}
	}
	slices.Sort(minutes)
	out := []spi.StatsSample{}
	for _, m := range minutes[:min(limit, len(minutes))] {
		counts, err := spi.DecodeStatsCounts(s.samples[m])
		if err != nil {
			continue // left out (spi.StatsSampleStore.StatsSamples)
		}
		out = append(out, spi.StatsSample{At: time.Unix(m, 0).UTC(), Counts: counts})
	}
	return out, nil
}
