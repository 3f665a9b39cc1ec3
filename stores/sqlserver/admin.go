package sqlserver

import (
	"context"
	"database/sql"
	"time"
)

// upsertRetryable is IsRetryable plus a key clash, which an upsert that
// raced with another creating the same row resolves by running again.
func upsertRetryable(err error) bool { return IsRetryable(err) || isDuplicateKey(err, "") }

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	return s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		_, err := tx.ExecContext(ctx, heartbeatTasksSQL, name(nodeID), dbTime(now), tasks)
		return err
	})
}
