package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// tasksPerStatement bounds the tasks of one candidates statement: SQLite
// allows 500 terms in a compound SELECT, and each task has five.
const tasksPerStatement = 64

// claimUpdate moves the chosen jobs (a JSON array of ids) to RUNNING for a
// node at a time and returns them. The unary + keeps the status test off
// the index: with it, SQLite would read the chosen ids by scanning every
// PENDING entry of the claim index through a Bloom filter instead of
// looking each id up by primary key.
const claimUpdate = `UPDATE scheduler_job
			SET status = 'RUNNING', owner_node = ?, claim_seq = claim_seq + 1, claimed_time = ?
			WHERE job_id IN (SELECT value FROM json_each(?)) AND +status = 'PENDING'
			RETURNING ` + jobColumns

func claimSQL(node string, now time.Time, ids []uuid.UUID) (string, []any) {
	return claimUpdate, []any{nullString(node), micros(now), idList(ids)}
}

// Holders counts the RUNNING jobs naming each resource, through the
// partial index idx_scheduler_job_resource.
func (database) Holders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT r.value, (SELECT COUNT(*) FROM scheduler_job j
			WHERE j.resource_name = r.value AND j.status = 'RUNNING')
		FROM json_each(?) r`, jsonList(resources))
	if err != nil {
		return nil, err
	}
	return sqlcore.ReadCounts(rows)
}
