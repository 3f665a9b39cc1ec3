package nodecore

import (
	"fmt"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Expired is the failure of a claimed job that may no longer start: its
// start-by deadline (spi.StartBy) is before now, on the node's clock. It
// is final (not retried) and wraps ratchet.ErrExpired; nil when the job
// may run. The node writes it in place of running the body, for every
// claim, a retry's or a crash redelivery's as the first.
func Expired(j *spi.Job, now time.Time) error {
	by, ok := spi.StartBy(j)
	if !ok || !now.After(by) || bug("start-by-ignored") {
		return nil
	}
	return ratchet.DoNotRetry(fmt.Errorf("%w: not started by %s (claimed at %s)", ratchet.ErrExpired,
		by.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano)))
}
