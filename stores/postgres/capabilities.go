package postgres

import (
	"context"
	"fmt"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// writeState runs one state write: a statement that locks the job row FOR
// SHARE, writes only when the fence (a RUNNING job with claim sequence
// *fence, when fence is not nil) and the version hold, and tells which
// condition failed.
func (s *Store) writeState(ctx context.Context, w sqlcore.StateWrite) (spi.StateWriteResult, error) {
	jobID, ns, state, expected, init, fence := w.JobID, w.Namespace, w.State, w.Expected, w.Init, w.Fence
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	var found, owned, wrote bool
	if init {
		err = s.pool.QueryRow(ctx, s.sql.initState, pgUUID(jobID), ns, state, fence).Scan(&found, &owned, &wrote)
	} else {
		err = s.pool.QueryRow(ctx, s.sql.updateState, pgUUID(jobID), ns, state, expected, fence).Scan(&found, &owned, &wrote)
	}
	switch {
	case err != nil:
		return 0, fail("write state of job "+jobID.String(), err)
	case !found:
		return 0, fmt.Errorf("postgres: write state: %w: %s", spi.ErrNotFound, jobID)
	case !owned:
		return spi.StateSuperseded, nil
	case wrote:
		return spi.StateUpdated, nil
	}
	return spi.StateVersionConflict, nil
}
