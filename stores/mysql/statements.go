package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// statements holds the store's fixed SQL that is MySQL's own (the portable
// statements are sqlcore's, see dialect), with table names qualified by its
// database. Statements whose shape depends on a batch (IN lists, multi-row
// VALUES) are built per call from the qualified names in t.
type statements struct {
	t                         tables
	jobColumns                string
	listJobs, listByStatus    string
	heartbeat, heartbeatTasks string
	acquireLease              string
	insertState               string
	insertProperty            string
	propertiesByPrefix        string
}

// tables are the qualified table names of a store's database.
type tables struct {
	job, tag, node, resource, lease, state, prop string
}

// buildStatements returns the statements of a store on database.
func buildStatements(database string) statements {
	q := func(table string) string { return quoteIdent(database) + "." + quoteIdent(table) }
	t := tables{
		job: q("scheduler_job"), tag: q("scheduler_job_tag"), node: q("scheduler_node"),
		resource: q("scheduler_resource"), lease: q("scheduler_lease"),
		state: q("scheduler_job_state"), prop: q("scheduler_job_property"),
	}
	r := strings.NewReplacer("{job}", t.job, "{tag}", t.tag, "{node}", t.node, "{resource}", t.resource,
		"{lease}", t.lease, "{state}", t.state, "{prop}", t.prop)
	var s statements
	s.t = t
	s.jobColumns = r.Replace(jobColumnsTemplate)
	s.listJobs = `SELECT ` + s.jobColumns + ` FROM ` + t.job + ` j WHERE j.job_id > ? ORDER BY j.job_id LIMIT ?`
	// Through idx_scheduler_job_status (status, job_id), in index order:
	// the optimizer may otherwise pick the claim index and sort every row
	// of the status.
	s.listByStatus = `SELECT ` + s.jobColumns + ` FROM ` + t.job + ` j FORCE INDEX (idx_scheduler_job_status)
		WHERE j.status = ? AND j.job_id > ? ORDER BY j.job_id LIMIT ?`
	s.heartbeat = r.Replace(`INSERT INTO {node} (node_id, heartbeat_ts) VALUES (?, ?)
		ON DUPLICATE KEY UPDATE heartbeat_ts = VALUES(heartbeat_ts)`)
	s.heartbeatTasks = r.Replace(`INSERT INTO {node} (node_id, heartbeat_ts, task_names) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE heartbeat_ts = VALUES(heartbeat_ts), task_names = VALUES(task_names)`)
	// The owner is assigned first, from the row as it was: it becomes the
	// caller when the lease is free, expired or the caller's already. The
	// expiry is assigned second, and sees the new owner (MySQL and MariaDB
	// evaluate the assignments of ON DUPLICATE KEY UPDATE from left to
	// right), so it moves exactly when the caller holds the lease.
	s.acquireLease = r.Replace(`INSERT INTO {lease} (name, owner, expires_at) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE
			owner = IF(owner = VALUES(owner) OR expires_at <= ?, VALUES(owner), owner),
			expires_at = IF(owner = VALUES(owner), VALUES(expires_at), expires_at)`)
	s.insertState = r.Replace(`INSERT INTO {state} (job_id, namespace, state_json, version) VALUES (?, ?, ?, 0)`)
	s.insertProperty = r.Replace(`INSERT INTO {prop} (job_id, prop_key, prop_value) SELECT job_id, ?, ? FROM {job} WHERE job_id = ?`)
	// The columns are VARBINARY: LEFT counts bytes and = compares them, so
	// no character of the prefix is a wildcard and case matters.
	s.propertiesByPrefix = r.Replace(`SELECT p.prop_key, p.prop_value FROM {job} j
		LEFT JOIN {prop} p ON p.job_id = j.job_id AND LEFT(p.prop_key, ?) = ?
		WHERE j.job_id = ?`)
	return s
}

// dialect returns the statements and facts of the shared store methods:
// the portable statements in MySQL's syntax, and its own where MySQL's SQL
// differs.
func (st statements) dialect(database string) sqlcore.Dialect[[]byte] {
	arg := func(q string, args ...any) (string, []any) { return q, args }
	return sqlcore.WithSyntax(sqlcore.Syntax{
		Mark:       func(int) string { return "?" },
		Table:      func(name string) string { return quoteIdent(database) + "." + quoteIdent(name) },
		JobColumns: st.jobColumns,
		ID:         func(id uuid.UUID) any { return binID(id) },
		Time:       nullDBTime,
		Name:       func(s string) any { return []byte(s) },
		NullName:   nullBinary,
		LockOn:     " FOR UPDATE",
		Limit:      " LIMIT ?",
		// The state writes read the job's fence with a shared lock: from
		// the latest committed row, and no claim, completion, release or
		// recovery can change the job until the write commits.
		FenceOn: " LOCK IN SHARE MODE",
	}, sqlcore.Dialect[[]byte]{
		ParseID:         scanID,
		IDText:          idText,
		Tags:            hexTags,
		MaxIDs:          1000,
		IsDuplicate:     func(err error) bool { return errCode(err) == errDuplicateKey },
		ExistingKeysSQL: st.existingKeysSQL,
		RowsPerInsert:   rowsPerInsert,
		TagsPerInsert:   tagsPerInsert,
		RowBytes:        rowSize,
		InsertRetryable: insertRetryable,
		TxName:          "the MySQL store",
		ListJobsSQL: func(after uuid.UUID, status spi.Status, limit int) (string, []any) {
			if status != "" {
				return arg(st.listByStatus, string(status), binID(after), int64(limit))
			}
			return arg(st.listJobs, binID(after), int64(limit))
		},
		PropertiesByPrefixSQL: func(id uuid.UUID, prefix string) (string, []any) {
			return arg(st.propertiesByPrefix, int64(len(prefix)), []byte(prefix), binID(id))
		},
		HeartbeatTasksSQL: func(nodeID, tasks string, now time.Time) (string, []any) {
			return arg(st.heartbeatTasks, []byte(nodeID), dbTime(now), tasks)
		},
		HeartbeatSQL: func(nodeID string, now time.Time) (string, []any) {
			return arg(st.heartbeat, []byte(nodeID), dbTime(now))
		},
		AcquireLeaseSQL: func(name, owner string, until, now time.Time) (string, []any) {
			return arg(st.acquireLease, []byte(name), []byte(owner), dbTime(until), dbTime(now))
		},
		PutPropertySQL: func(jobID uuid.UUID, key, value string) (string, []any) {
			return arg(st.insertProperty, []byte(key), []byte(value), binID(jobID))
		},
		InitStateSQL: func(jobID uuid.UUID, ns string, state []byte) (string, []any) {
			return arg(st.insertState, binID(jobID), []byte(ns), state)
		},
		TasksPerClaim: tasksPerStatement,
		CandidatesSQL: func(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
			return candidatesSQL(st.t, compileTags(tags), tasks, dbTime(now), limit)
		},
		Holders: func(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
			return lockResources(ctx, tx, st.t, resources)
		},
		OrphansSQL:     st.orphansSQL,
		LockOrphansSQL: st.lockOrphansSQL,
	})
}

// tagFilter is a spi.TagFilter in the form the claim statement takes.
type tagFilter struct {
	all, any, none []string // all without repeats
}

func compileTags(f spi.TagFilter) tagFilter {
	return tagFilter{all: sqlcore.UniqueTags(f.All), any: f.Any, none: f.None}
}

// conditions returns the tag conditions on the job aliased x and appends
// their arguments: correlated subqueries on the tag table's primary key
// (job_id, tag) that count the job's tags of each list: all of All (the
// count of its distinct tags), at least one of Any, none of None. They are
// the EXISTS / NOT EXISTS of the filter written as counts, because MySQL
// and MariaDB may turn a top-level EXISTS into a semi-join that first
// collects every job carrying the tags (a scan as large as the backlog);
// a count is evaluated for the rows the index scan visits only.
func (tf tagFilter) conditions(tagTable string, args []any) (string, []any) {
	var b strings.Builder
	count := func(n int) string {
		return `(SELECT COUNT(*) FROM ` + tagTable + ` t WHERE t.job_id = x.job_id AND t.tag IN (` + marks(n) + `))`
	}
	if len(tf.all) > 0 {
		b.WriteString(`
			AND ` + count(len(tf.all)) + ` = ?`)
		args = append(append(args, binArgs(tf.all)...), int64(len(tf.all)))
	}
	if len(tf.any) > 0 {
		b.WriteString(`
			AND ` + count(len(tf.any)) + ` > 0`)
		args = append(args, binArgs(tf.any)...)
	}
	if len(tf.none) > 0 {
		b.WriteString(`
			AND ` + count(len(tf.none)) + ` = 0`)
		args = append(args, binArgs(tf.none)...)
	}
	return b.String(), args
}

// candidatesSQL returns the claim's candidates statement for tasks and its
// arguments: for each task and priority level from CRITICAL down, the
// first limit due PENDING jobs of the task in (scheduled_time, job_id)
// order that the node may run, locked with FOR UPDATE SKIP LOCKED; a UNION
// ALL of LIMITed subqueries, each a range scan of the task-led
// idx_scheduler_job_claim on (status, task_name, priority, scheduled_time,
// job_id), so jobs of tasks the claim does not list are never read. Inside
// that scan, jobs whose resource is full (as many RUNNING holders as their
// limit, counted through idx_scheduler_job_resource) and jobs failing the
// tag filter are passed over, so they never block the jobs behind them.
// The subqueries' own reads (tags, holders) take no locks: a locking clause
// applies to the query block it ends, not to nested subqueries.
func candidatesSQL(t tables, tf tagFilter, tasks []string, now any, limit int) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, len(tasks)*spi.NumPriorities*(4+len(tf.all)+len(tf.any)+len(tf.none)))
	for i, task := range tasks {
		for p := spi.NumPriorities - 1; p >= 0; p-- {
			if i > 0 || p < spi.NumPriorities-1 {
				b.WriteString("\nUNION ALL\n")
			}
			args = append(args, task, now)
			var cond string
			cond, args = tf.conditions(t.tag, args)
			args = append(args, int64(limit))
			fmt.Fprintf(&b, `(SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
			FROM %s x FORCE INDEX (idx_scheduler_job_claim)
			WHERE x.status = 'PENDING' AND x.task_name = ? AND x.priority = %d AND x.scheduled_time <= ?
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM %s r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)%s
			ORDER BY x.scheduled_time, x.job_id
			LIMIT ?
			FOR UPDATE SKIP LOCKED)`, t.job, p, t.job, cond)
		}
	}
	return b.String(), args
}

// tasksPerStatement bounds the tasks of one candidates statement (five
// subqueries each), well inside the 65,535 placeholders of a statement.
const tasksPerStatement = 50
