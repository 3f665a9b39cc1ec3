package memory

import (
	"context"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.RateLimitStore = (*Store)(nil)

// rateLog returns the key of the log of j's rate limit in s.rates, for a
// claim of p.
func (s *Store) rateLog(p spi.ClaimParams, j *spi.Job) string {
	if s.bug("a rate limit counted per node") {
		return p.NodeID + "/" + j.Resource
	}
	return j.Resource
}

// window prunes the starts of log older than its period before now, and
// returns those left.
func (s *Store) window(log string, period time.Duration, now time.Time) []time.Time {
	starts := s.rates[log]
	i := 0
	for i < len(starts) && !starts[i].After(now.Add(-period)) {
		i++
	}
	starts = starts[i:]
	if len(starts) == 0 {
		delete(s.rates, log)
		return nil
	}
	s.rates[log] = starts
	return starts
}

// rateFree reports whether the rate limit of j, a job of a rate
// resource, admits one more start at p.Now.
func (s *Store) rateFree(p spi.ClaimParams, j *spi.Job) bool {
	_, period, ok := spi.RateOf(j.Resource)
	if !ok || s.bug("claim ignores rate limits") {
		return true
	}
	return len(s.window(s.rateLog(p, j), period, p.Now)) < j.ResourceLimit
}

// heldBack reports to p.Held j, a job the claim p passed over, when its
// rate limit's window is full.
func (s *Store) heldBack(p spi.ClaimParams, j *spi.Job) {
	_, period, ok := spi.RateOf(j.Resource)
	if !ok || p.Held == nil {
		return
	}
	if w := s.window(s.rateLog(p, j), period, p.Now); len(w) >= j.ResourceLimit {
		p.Held.Hold(1, w[0].Add(period).Sub(p.Now))
	}
}

// started records the start of j by the claim p, when its resource is a
// rate limit's.
func (s *Store) started(p spi.ClaimParams, j *spi.Job) {
	if !spi.IsRateResource(j.Resource) || s.bug("a rate limit's starts are not recorded") {
		return
	}
	log := s.rateLog(p, j)
	s.rates[log] = append(s.rates[log], p.Now)
	if p.Now.After(s.rateNow) {
		s.rateNow = p.Now
	}
}

// RateStarts implements spi.RateLimitStore, at the time of the latest
// claim (the store's clock is its claims').
func (s *Store) RateStarts(_ context.Context, resources []string) ([]spi.RateWindow, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	now := s.rateNow
	out := make([]spi.RateWindow, 0, len(resources))
	for _, r := range resources {
		key, period, ok := spi.RateOf(r)
		if !ok {
			continue
		}
		n := int64(0)
		for _, t := range s.rates[r] {
			if t.After(now.Add(-period)) && !t.After(now) {
				n++
			}
		}
		out = append(out, spi.RateWindow{Resource: r, Key: key, Period: period, At: now, Starts: n})
	}
	return out, nil
}
