package spi

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A rate limit (ratchet.WithRateLimit) is a resource of its own kind: the
// job's Resource names the limit's key and period (RateResource), and
// its ResourceLimit is the most starts in any window of the period. A
// claim admits a job of it only while fewer than ResourceLimit jobs of
// the resource started (were claimed) in the period before the claim's
// time, by the database's clock where there is one, counting the jobs the
// claim takes; the others are passed over and stay PENDING, spending no
// attempt. Like a permit's, the claim's count and its record of the
// starts it makes are one step under the resource's lock, across all
// claimers at once. A rate-limited resource, like a permit, also runs no
// more than ResourceLimit jobs at once.

// rateResourcePrefix starts the Resource of a rate limit; WithResource
// refuses it.
const rateResourcePrefix = "ratchet.rate:"

// MinRatePeriod and MaxRatePeriod bound the period of a rate limit.
const (
	MinRatePeriod = time.Millisecond
	MaxRatePeriod = 24 * time.Hour
)

// RateResource is the Resource of the rate limit of key over period:
// "ratchet.rate:" + the period in microseconds + ":" + key.
func RateResource(key string, period time.Duration) string {
	return rateResourcePrefix + strconv.FormatInt(period.Microseconds(), 10) + ":" + key
}

// RateOf reports whether resource is a rate limit, and its key and
// period.
func RateOf(resource string) (key string, period time.Duration, ok bool) {
	rest, ok := strings.CutPrefix(resource, rateResourcePrefix)
	if !ok {
		return "", 0, false
	}
	us, key, ok := strings.Cut(rest, ":")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return key, time.Duration(n) * time.Microsecond, true
}

// IsRateResource reports whether resource is a rate limit's (or is named
// like one).
func IsRateResource(resource string) bool { return strings.HasPrefix(resource, rateResourcePrefix) }

// validateRate checks a job's rate limit, if its resource is one.
func validateRate(j *Job) error {
	if !IsRateResource(j.Resource) {
		return nil
	}
	_, period, ok := RateOf(j.Resource)
	switch {
	case !ok:
		return fmt.Errorf("job %s names resource %q: the prefix %q is the rate limits' and the rest is not a period and a key", j.ID, j.Resource, rateResourcePrefix)
	case period < MinRatePeriod || period > MaxRatePeriod:
		return fmt.Errorf("job %s: rate limit period %s outside %s..%s", j.ID, period, MinRatePeriod, MaxRatePeriod)
	}
	return nil
}

// RateWindow is the rate limit of one resource as a claim sees it: the
// key and period, and its starts in the period before a time.
type RateWindow struct {
	Resource string
	Key      string
	Period   time.Duration
	// Starts is the number of jobs of the resource claimed in the period
	// before At.
	Starts int64
	At     time.Time
}

// RateLimitStore is implemented by a store whose claims honour rate
// limits (RateResource). A store without it cannot take rate-limited
// jobs, and the client refuses them with an error.
type RateLimitStore interface {
	// RateStarts reads the window of each rate resource now, by the
	// database's clock: how many of its jobs started in the period before
	// (what `jobs show` and the dashboard report as a job's wait).
	RateStarts(ctx context.Context, resources []string) ([]RateWindow, error)
}
