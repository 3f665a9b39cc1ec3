package sqlcore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

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

// LiveNodesSQL reads the nodes whose heartbeat is at or after the one
// parameter (written mark, for example ? or $1) from the node table:
// node_id, heartbeat_ts and task_names, for ReadNodes.
func LiveNodesSQL(table, mark string) string {
	return `SELECT node_id, heartbeat_ts, task_names FROM ` + table + ` WHERE heartbeat_ts >= ` + mark
}

// ReadNodes reads the rows of LiveNodesSQL, whose heartbeat the dialect
// stores as T (toTime converts it to UTC), ordered by node id. The caller
// closes rows.
func ReadNodes[T any](rows Scanner, toTime func(T) time.Time) ([]spi.NodeInfo, error) {
	var out []spi.NodeInfo
	for rows.Next() {
		var n spi.NodeInfo
		var hb T
		var tasks sql.NullString
		if err := rows.Scan(&n.ID, &hb, &tasks); err != nil {
			return nil, err
		}
		var err error
		if n.Tasks, err = decodeTasks(n.ID, tasks); err != nil {
			return nil, err
		}
		n.Heartbeat = toTime(hb)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b spi.NodeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PendingTasksCountSQL counts the PENDING jobs of the job table per task,
// with the earliest scheduled time of each: one pass over the PENDING
// entries of the task-led claim index.
func PendingTasksCountSQL(table string) string {
	return `SELECT task_name, COUNT(*), MIN(scheduled_time) FROM ` + table + ` WHERE status = 'PENDING' GROUP BY task_name`
}

// ReadBacklogs reads the rows of PendingTasksCountSQL, whose times the
// dialect stores as T, ordered by task. The caller closes rows.
func ReadBacklogs[T any](rows Scanner, toTime func(T) time.Time) ([]spi.TaskBacklog, error) {
	var out []spi.TaskBacklog
	for rows.Next() {
		var b spi.TaskBacklog
		var earliest T
		if err := rows.Scan(&b.Task, &b.Pending, &earliest); err != nil {
			return nil, err
		}
		b.Earliest = toTime(earliest)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b spi.TaskBacklog) int { return strings.Compare(a.Task, b.Task) })
	return out, nil
}

// QueryNodes runs query (LiveNodesSQL) with since through q and reads the
// nodes, for the database/sql stores.
func QueryNodes[T any](ctx context.Context, q Querier, query string, since any, toTime func(T) time.Time) ([]spi.NodeInfo, error) {
	rows, err := q.QueryContext(ctx, query, since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return ReadNodes(rows, toTime)
}

// QueryBacklogs runs query (PendingTasksCountSQL) through q and reads the
// pending jobs per task, for the database/sql stores.
func QueryBacklogs[T any](ctx context.Context, q Querier, query string, toTime func(T) time.Time) ([]spi.TaskBacklog, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return ReadBacklogs(rows, toTime)
}

// NodeMethods implements spi.NodeTaskStore for a database/sql store over
// its dialect's statements. A store embeds it (under a local alias, so the
// field stays unexported) and fills it when it builds itself; T is the Go
// type the dialect scans a time into.
type NodeMethods[T any] struct {
	Gate *Gate
	DB   Querier
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// Beat writes the heartbeat of nodeID at now with tasks, the
	// EncodeTasks form of the node's tasks (an upsert).
	Beat func(ctx context.Context, nodeID, tasks string, now time.Time) error
	// LiveSQL is LiveNodesSQL and PendingSQL is PendingTasksCountSQL of
	// the dialect.
	LiveSQL, PendingSQL string
	// Bind is a time as the dialect binds it; Time converts a scanned one
	// back, in UTC.
	Bind func(time.Time) any
	Time func(T) time.Time
}

// HeartbeatTasks is Heartbeat that records the node's tasks too. It
// implements [spi.NodeTaskStore].
func (m NodeMethods[T]) HeartbeatTasks(ctx context.Context, nodeID string, tasks []string, now time.Time) error {
	done, err := m.Gate.Enter()
	if err != nil {
		return err
	}
	defer done()
	if err := m.Beat(ctx, nodeID, EncodeTasks(tasks), now); err != nil {
		return m.Fail("heartbeat "+nodeID, err)
	}
	return nil
}

// LiveNodes returns the nodes whose heartbeat is at or after since, with
// their tasks. It implements [spi.NodeTaskStore].
func (m NodeMethods[T]) LiveNodes(ctx context.Context, since time.Time) ([]spi.NodeInfo, error) {
	done, err := m.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	nodes, err := QueryNodes(ctx, m.DB, m.LiveSQL, m.Bind(since), m.Time)
	if err != nil {
		return nil, m.Fail("list the live nodes", err)
	}
	return nodes, nil
}

// PendingTasks counts the PENDING jobs per task, in one pass over the
// PENDING entries of the claim index. It implements [spi.NodeTaskStore].
func (m NodeMethods[T]) PendingTasks(ctx context.Context) ([]spi.TaskBacklog, error) {
	done, err := m.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := QueryBacklogs(ctx, m.DB, m.PendingSQL, m.Time)
	if err != nil {
		return nil, m.Fail("count the pending jobs per task", err)
	}
	return out, nil
}
