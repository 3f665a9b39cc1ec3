package sqlite

import (
	"time"
)

// The node statements of sqlcore.Dialect that SQLite writes as upserts.

func heartbeatTasksSQL(nodeID, tasks string, now time.Time) (string, []any) {
	return `INSERT INTO scheduler_node (node_id, heartbeat_ts, task_names) VALUES (?, ?, ?)
		ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts, task_names = excluded.task_names`,
		[]any{nodeID, micros(now), tasks}
}

func heartbeatSQL(nodeID string, now time.Time) (string, []any) {
	return `INSERT INTO scheduler_node (node_id, heartbeat_ts) VALUES (?, ?)
		ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts`, []any{nodeID, micros(now)}
}
