package sqlcore

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// EncodeTasks is the stored form of the tasks a node records with its
// heartbeat (the task_names column of scheduler_node): a JSON array,
// sorted and without repeats. A node that recorded none has NULL there.
func EncodeTasks(tasks []string) string {
	b, _ := json.Marshal(spi.TaskSet(tasks)) // a []string always marshals
	return string(b)
}

// decodeTasks reads the task_names column: nil for NULL.
func decodeTasks(node string, raw sql.NullString) ([]string, error) {
	if !raw.Valid {
		return nil, nil
	}
	out := []string{}
	if err := json.Unmarshal([]byte(raw.String), &out); err != nil {
		return nil, fmt.Errorf("%w: node %q: task_names %q is not a JSON array of strings: %w", spi.ErrCorruptJob, node, raw.String, err)
	}
	return out, nil
}

// decodeReport reads the node_report column: nil for NULL, and nil for a
// report that cannot be read (a report only informs: it never hides the
// node, see spi.NodeInfo.Report).
func decodeReport(raw sql.NullString) *spi.NodeReport {
	if !raw.Valid {
		return nil
	}
	r, err := spi.DecodeNodeReport(raw.String)
	if err != nil {
		return nil
	}
	return r
}

// LiveNodesSQL reads the nodes whose heartbeat is at or after the one
// parameter (written mark, for example ? or $1) from the node table:
// node_id, heartbeat_ts, task_names and node_report, for LiveNodes.
func LiveNodesSQL(table, mark string) string {
	return `SELECT node_id, heartbeat_ts, task_names, node_report FROM ` + table + ` WHERE heartbeat_ts >= ` + mark
}

// PendingTasksCountSQL counts the PENDING jobs of the job table per task,
// with the earliest scheduled time of each: one pass over the PENDING
// entries of the task-led claim index. claimTask is the dialect's
// Syntax.ClaimTask.
func PendingTasksCountSQL(table, claimTask string) string {
	k := claimKey(claimTask)
	return `SELECT ` + k.task("") + `, COUNT(*), MIN(scheduled_time) FROM ` + table + ` WHERE ` + k.pending("") + ` GROUP BY ` + k.task("")
}
