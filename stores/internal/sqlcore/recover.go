package sqlcore

import "github.com/ratchet-go/ratchet/sdk/spi"

// CrashOutcome is the crash-budget decision of orphan recovery for a job
// whose node died while running it, after crash earlier crashes, under a
// budget of maxRedeliveries: back to PENDING with the crash count + 1 while
// crash is below the budget, else FAILED (the dead-letter queue) with the
// count unchanged. A budget of 0 fails the job on its first crash.
func CrashOutcome(crash, maxRedeliveries int) (status spi.Status, crashCount int) {
	if crash < maxRedeliveries {
		return spi.StatusPending, crash + 1
	}
	return spi.StatusFailed, crash
}
