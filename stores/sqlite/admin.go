package sqlite

import (
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// liveNodesSQL and pendingCountSQL are the reads of spi.NodeTaskStore.
var (
	liveNodesSQL    = sqlcore.LiveNodesSQL("scheduler_node", "?")
	pendingCountSQL = sqlcore.PendingTasksCountSQL("scheduler_job")
)

func heartbeatTasksSQL(nodeID, tasks string, now time.Time) (string, []any) {
	return `INSERT INTO scheduler_node (node_id, heartbeat_ts, task_names) VALUES (?, ?, ?)
		ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts, task_names = excluded.task_names`,
		[]any{nodeID, micros(now), tasks}
}

// The node and recovery statements of sqlcore.Dialect. SQLite writes one
// transaction at a time, so the reads need no locks.

func heartbeatSQL(nodeID string, now time.Time) (string, []any) {
	return `INSERT INTO scheduler_node (node_id, heartbeat_ts) VALUES (?, ?)
		ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts`, []any{nodeID, micros(now)}
}

func deregisterSQL(nodeID string) (string, []any) {
	return `DELETE FROM scheduler_node WHERE node_id = ?`, []any{nodeID}
}

func orphansSQL(cutoff time.Time, nodes []string) (string, []any) {
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
		FROM scheduler_job j
		WHERE j.status = 'RUNNING' AND (
			COALESCE(j.owner_node, '') IN (SELECT value FROM json_each(?))
			OR NOT EXISTS (SELECT 1 FROM scheduler_node n
				WHERE n.node_id = COALESCE(j.owner_node, '') AND n.heartbeat_ts >= ?))
		ORDER BY j.job_id`, []any{jsonList(nodes), micros(cutoff)}
}

func requeueSQL(now time.Time, ids []string) (string, []any) {
	return `UPDATE scheduler_job
		SET status = 'PENDING', crash_count = crash_count + 1, scheduled_time = ?,
			claim_seq = claim_seq + 1, owner_node = NULL
		WHERE job_id IN (SELECT value FROM json_each(?))`, []any{micros(now), jsonList(ids)}
}

func burySQL(now time.Time, lastError string, ids []string) (string, []any) {
	return `UPDATE scheduler_job
		SET status = 'FAILED', last_error = ?, finished_time = ?,
			claim_seq = claim_seq + 1, owner_node = NULL
		WHERE job_id IN (SELECT value FROM json_each(?))`, []any{nullString(lastError), nullMicros(now), jsonList(ids)}
}

func deleteNodesSQL(cutoff time.Time, nodes []string) (string, []any) {
	return `DELETE FROM scheduler_node
		WHERE heartbeat_ts < ? OR node_id IN (SELECT value FROM json_each(?))`, []any{micros(cutoff), jsonList(nodes)}
}

// retryFailedSQL, cancelSQL and statusSQL are the statements of the shared
// RetryFailedJob and CancelJob (sqlcore.Dialect).
func retryFailedSQL(id uuid.UUID, now time.Time) (string, []any) {
	return `UPDATE scheduler_job
			SET status = 'PENDING', last_error = NULL, attempts = 0, crash_count = 0,
				scheduled_time = ?, finished_time = NULL, owner_node = NULL
			WHERE job_id = ? AND status = 'FAILED'`, []any{micros(now), id.String()}
}

func cancelSQL(id uuid.UUID, now time.Time) (string, []any) {
	return `UPDATE scheduler_job
			SET status = 'CANCELLED', finished_time = ?
			WHERE job_id = ? AND status = 'PENDING'`, []any{nullMicros(now), id.String()}
}

func statusSQL(id uuid.UUID) (string, []any) {
	return `SELECT status FROM scheduler_job WHERE job_id = ?`, []any{id.String()}
}
