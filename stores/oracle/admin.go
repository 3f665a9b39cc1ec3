package oracle

import (
	"context"
	"database/sql"
	"time"
)

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	return s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		query, args := heartbeatTasksSQL(nodeID, tasks, now)
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}
