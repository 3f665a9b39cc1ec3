package ratchet

import (
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// MaxRateKeyBytes is the longest key of WithRateLimit.
const MaxRateKeyBytes = 200

// WithRateLimit limits how often the jobs of key start: across every node,
// at most n of them start (are claimed) in any window of period, by the
// database's clock (a node's clock, skewed or not, plays no part). A job
// held back stays PENDING, spends no attempt, and starts once the window
// has room; the jobs behind it of other keys and of none are claimed
// meanwhile. Give every job of a key the same n and period (they are the
// job's own, as a resource's limit is): key and period together name the
// limit. Per task: use the task's name as the key.
//
// The limit is a resource of its own kind (it cannot go with
// WithResource): like a permit, a key also runs at most n jobs at once.
// The store must keep rate limits (spi.RateLimitStore; not MongoDB).
func WithRateLimit(key string, n int, period time.Duration) SubmitOption {
	return func(c *submitConfig) {
		switch {
		case key == "" || len(key) > MaxRateKeyBytes:
			c.errs = append(c.errs, invalidArg("WithRateLimit: the key must have 1 to %d bytes (got %d)", MaxRateKeyBytes, len(key)))
		case n < 1:
			c.errs = append(c.errs, invalidArg("WithRateLimit(%q): at least 1 start per period (got %d)", key, n))
		case period < spi.MinRatePeriod || period > spi.MaxRatePeriod || period%time.Microsecond != 0:
			c.errs = append(c.errs, invalidArg("WithRateLimit(%q): a period of whole microseconds from %s to %s (got %s)", key, spi.MinRatePeriod, spi.MaxRatePeriod, period))
		case c.resource != "" && !spi.IsRateResource(c.resource):
			c.errs = append(c.errs, invalidArg("WithRateLimit(%q) and WithResource(%q): a job holds one resource, a permit or a rate limit", key, c.resource))
		default:
			p := period
			if bug("rate-limit-period-halved") {
				p /= 2
			}
			c.resource, c.resourceLimit = spi.RateResource(key, p), n
		}
	}
}

// checkRate refuses a rate-limited submission to a store without rate
// limits.
func (c *Client) checkRate(cfg *submitConfig) error {
	if spi.IsRateResource(cfg.resource) && spi.CapabilitiesOf(c.store).Rates == nil {
		return fmt.Errorf("WithRateLimit: %w: store %T keeps no rate limits", ErrUnsupported, c.store)
	}
	return nil
}
