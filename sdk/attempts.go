package ratchet

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Attempt is the record of one run of a job (Client.Attempts): its claim
// sequence (ascending from run to run), node, start and end, outcome and
// sanitized error.
type Attempt = spi.Attempt

// AttemptOutcome is how a run ended; its names are the engine's event
// kinds where one exists.
type AttemptOutcome = spi.AttemptOutcome

// The outcomes of a run (Attempt.Outcome).
const (
	AttemptSucceeded = spi.AttemptSucceeded // the body returned nil
	AttemptFailed    = spi.AttemptFailed    // the body returned an error (retried or not: the job's status says)
	AttemptTimedOut  = spi.AttemptTimedOut  // past its run timeout (ErrTimeout)
	AttemptSnoozed   = spi.AttemptSnoozed   // the body snoozed (Snooze, Sleep)
	AttemptCancelled = spi.AttemptCancelled // the job was cancelled while it ran
	AttemptCrashed   = spi.AttemptCrashed   // its node died; orphan recovery took the job back
	AttemptReleased  = spi.AttemptReleased  // its node stopped and gave the job back
	AttemptExpired   = spi.AttemptExpired   // claimed past its start-by deadline; the body did not run (ErrExpired)
)

// Attempts returns the history of job id's runs, oldest first: a record of
// each run the store keeps (the last spi.AttemptsKept claims), and the run
// the job's row shows, a success or a run still going (no outcome, no
// finish). An archived job keeps its records. A job that never ran has
// none; an unknown id wraps ErrNotFound. A store without
// spi.AttemptStore gives an error wrapping ErrUnsupported.
func (c *Client) Attempts(ctx context.Context, id uuid.UUID) ([]Attempt, error) {
	as := spi.CapabilitiesOf(c.store).Attempts
	if as == nil {
		return nil, fmt.Errorf("ratchet: attempts of job %s: %w: store %T keeps no attempt records", id, ErrUnsupported, c.store)
	}
	j, err := c.GetJob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ratchet: attempts of job %s: %w", id, err)
	}
	stored, err := as.JobAttempts(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ratchet: attempts of job %s: %w", id, err)
	}
	return spi.AttemptsOf(j, stored), nil
}
