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

// statements holds the store's fixed SQL, with table names qualified by its
// database. Statements whose shape depends on a batch (IN lists, multi-row
// VALUES) are built per call from the qualified names in t.
type statements struct {
	t                          tables
	jobColumns                 string
	getJob, listJobs           string
	listByStatus               string
	retryFailed, cancel        string
	statusOf                   string
	heartbeat, deregister      string
	acquireLease, leaseOwner   string
	releaseLease               string
	getState, stateFence       string
	insertState, updateState   string
	insertProperty             string
	getProperty                string
	propertiesByPrefix         string
	findByProperty, findAllBy  string
	claimedRows, lockedRunning string // prefixes completed with an IN list
	pendingTasks               string
	heartbeatTasks, liveNodes  string
	pendingCount               string
}

// tables are the qualified table names of a store's database.
type tables struct {
	job, tag, node, resource, lease, state, prop string
}

// insertColumns are the columns an insert writes, in the order of
// insertArgs.
const insertColumns = `job_id, task_name, payload, status, priority, scheduled_time, created_time,
	attempts, max_retries, backoff_kind, backoff_param_us, claim_seq, crash_count, owner_node,
	claimed_time, finished_time, last_error, job_result, result_type, idempotency_key, params,
	resource_name, resource_limit`

// numInsertColumns is the number of insertColumns.
const numInsertColumns = 23

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
	s.getJob = `SELECT ` + s.jobColumns + ` FROM ` + t.job + ` j WHERE j.job_id = ?`
	s.listJobs = `SELECT ` + s.jobColumns + ` FROM ` + t.job + ` j WHERE j.job_id > ? ORDER BY j.job_id LIMIT ?`
	// Through idx_scheduler_job_status (status, job_id), in index order:
	// the optimizer may otherwise pick the claim index and sort every row
	// of the status.
	s.listByStatus = `SELECT ` + s.jobColumns + ` FROM ` + t.job + ` j FORCE INDEX (idx_scheduler_job_status)
		WHERE j.status = ? AND j.job_id > ? ORDER BY j.job_id LIMIT ?`
	s.pendingTasks = sqlcore.PendingTasksSQL(t.job)
	s.claimedRows = `SELECT ` + s.jobColumns + ` FROM ` + t.job + ` j WHERE j.job_id IN `
	s.lockedRunning = `SELECT job_id, claim_seq FROM ` + t.job + ` WHERE status = 'RUNNING' AND job_id IN `
	s.retryFailed = r.Replace(`UPDATE {job} SET status = 'PENDING', last_error = NULL, attempts = 0, crash_count = 0,
			scheduled_time = ?, finished_time = NULL, owner_node = NULL
		WHERE job_id = ? AND status = 'FAILED'`)
	s.cancel = r.Replace(`UPDATE {job} SET status = 'CANCELLED', finished_time = ? WHERE job_id = ? AND status = 'PENDING'`)
	s.statusOf = r.Replace(`SELECT status FROM {job} WHERE job_id = ?`)
	s.heartbeat = r.Replace(`INSERT INTO {node} (node_id, heartbeat_ts) VALUES (?, ?)
		ON DUPLICATE KEY UPDATE heartbeat_ts = VALUES(heartbeat_ts)`)
	s.heartbeatTasks = r.Replace(`INSERT INTO {node} (node_id, heartbeat_ts, task_names) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE heartbeat_ts = VALUES(heartbeat_ts), task_names = VALUES(task_names)`)
	s.liveNodes = r.Replace(sqlcore.LiveNodesSQL("{node}", "?"))
	s.pendingCount = r.Replace(sqlcore.PendingTasksCountSQL("{job}"))
	s.deregister = r.Replace(`DELETE FROM {node} WHERE node_id = ?`)
	// The owner is assigned first, from the row as it was: it becomes the
	// caller when the lease is free, expired or the caller's already. The
	// expiry is assigned second, and sees the new owner (MySQL and MariaDB
	// evaluate the assignments of ON DUPLICATE KEY UPDATE from left to
	// right), so it moves exactly when the caller holds the lease.
	s.acquireLease = r.Replace(`INSERT INTO {lease} (name, owner, expires_at) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE
			owner = IF(owner = VALUES(owner) OR expires_at <= ?, VALUES(owner), owner),
			expires_at = IF(owner = VALUES(owner), VALUES(expires_at), expires_at)`)
	s.leaseOwner = r.Replace(`SELECT owner FROM {lease} WHERE name = ?`)
	s.releaseLease = r.Replace(`DELETE FROM {lease} WHERE name = ? AND owner = ?`)
	s.getState = r.Replace(`SELECT s.state_json, s.version FROM {job} j
		LEFT JOIN {state} s ON s.job_id = j.job_id AND s.namespace = ?
		WHERE j.job_id = ?`)
	// The state writes read the job's fence with a shared lock: from the
	// latest committed row, and no claim, completion, release or recovery
	// can change the job until the write commits.
	s.stateFence = r.Replace(`SELECT status, claim_seq FROM {job} WHERE job_id = ? LOCK IN SHARE MODE`)
	s.insertState = r.Replace(`INSERT INTO {state} (job_id, namespace, state_json, version) VALUES (?, ?, ?, 0)`)
	s.updateState = r.Replace(`UPDATE {state} SET state_json = ?, version = version + 1
		WHERE job_id = ? AND namespace = ? AND version = ?`)
	s.insertProperty = r.Replace(`INSERT INTO {prop} (job_id, prop_key, prop_value) SELECT job_id, ?, ? FROM {job} WHERE job_id = ?`)
	s.getProperty = r.Replace(`SELECT p.prop_key, p.prop_value FROM {job} j
		LEFT JOIN {prop} p ON p.job_id = j.job_id AND p.prop_key = ?
		WHERE j.job_id = ?`)
	// The columns are VARBINARY: LEFT counts bytes and = compares them, so
	// no character of the prefix is a wildcard and case matters.
	s.propertiesByPrefix = r.Replace(`SELECT p.prop_key, p.prop_value FROM {job} j
		LEFT JOIN {prop} p ON p.job_id = j.job_id AND LEFT(p.prop_key, ?) = ?
		WHERE j.job_id = ?`)
	s.findByProperty = r.Replace(`SELECT job_id FROM {prop} WHERE prop_key = ? AND prop_value = ? ORDER BY job_id LIMIT ?`)
	s.findAllBy = r.Replace(`SELECT job_id FROM {prop} WHERE prop_key = ? AND prop_value = ? ORDER BY job_id`)
	return s
}

// dialect returns the statements and facts of the shared store methods.
func (st statements) dialect() sqlcore.Dialect[[]byte] {
	arg := func(q string, args ...any) (string, []any) { return q, args }
	return sqlcore.Dialect[[]byte]{
		ParseID:     scanID,
		IDText:      idText,
		Tags:        hexTags,
		MaxIDs:      1000,
		IsDuplicate: func(err error) bool { return errCode(err) == errDuplicateKey },
		ReleaseSQL: func(now time.Time, ids []uuid.UUID) (string, []any) {
			return `UPDATE ` + st.t.job + ` SET status = 'PENDING', owner_node = NULL, scheduled_time = ?, claim_seq = claim_seq + 1
			WHERE status = 'RUNNING' AND job_id IN (` + marks(len(ids)) + `)`, append([]any{dbTime(now)}, idArgs(ids)...)
		},
		ExistingKeysSQL: st.existingKeysSQL,
		InsertJobsSQL:   st.insertJobsSQL,
		InsertTagsSQL:   st.insertTagsSQL,
		RowsPerInsert:   rowsPerInsert,
		TagsPerInsert:   tagsPerInsert,
		RowBytes:        rowSize,
		InsertRetryable: insertRetryable,
		TxName:          "the MySQL store",
		JobsSQL: func(ids []uuid.UUID) (string, []any) {
			return st.claimedRows + `(` + marks(len(ids)) + `)`, idArgs(ids)
		},
		GetJobSQL: func(id uuid.UUID) (string, []any) { return arg(st.getJob, binID(id)) },
		ListJobsSQL: func(after uuid.UUID, status spi.Status, limit int) (string, []any) {
			if status != "" {
				return arg(st.listByStatus, string(status), binID(after), int64(limit))
			}
			return arg(st.listJobs, binID(after), int64(limit))
		},
		RetryFailedSQL: func(id uuid.UUID, now time.Time) (string, []any) { return arg(st.retryFailed, dbTime(now), binID(id)) },
		CancelSQL:      func(id uuid.UUID, now time.Time) (string, []any) { return arg(st.cancel, nullDBTime(now), binID(id)) },
		StatusSQL:      func(id uuid.UUID) (string, []any) { return arg(st.statusOf, binID(id)) },
		GetStateSQL:    func(id uuid.UUID, ns string) (string, []any) { return arg(st.getState, []byte(ns), binID(id)) },
		PropertiesByPrefixSQL: func(id uuid.UUID, prefix string) (string, []any) {
			return arg(st.propertiesByPrefix, int64(len(prefix)), []byte(prefix), binID(id))
		},
		FindByPropertySQL: func(key, value string, limit int) (string, []any) {
			if limit > 0 {
				return arg(st.findByProperty, []byte(key), []byte(value), int64(limit))
			}
			return arg(st.findAllBy, []byte(key), []byte(value))
		},
		HeartbeatTasksSQL: func(nodeID, tasks string, now time.Time) (string, []any) {
			return arg(st.heartbeatTasks, []byte(nodeID), dbTime(now), tasks)
		},
		LiveNodesSQL:    func(since time.Time) (string, []any) { return arg(st.liveNodes, dbTime(since)) },
		PendingCountSQL: st.pendingCount,
		HeartbeatSQL: func(nodeID string, now time.Time) (string, []any) {
			return arg(st.heartbeat, []byte(nodeID), dbTime(now))
		},
		DeregisterSQL: func(nodeID string) (string, []any) { return arg(st.deregister, []byte(nodeID)) },
		RunningSQL: func(ids []uuid.UUID, lock bool) (string, []any) {
			q := st.lockedRunning + `(` + marks(len(ids)) + `)`
			if lock {
				q += ` ORDER BY job_id FOR UPDATE`
			}
			return q, idArgs(ids)
		},
		AcquireLeaseSQL: func(name, owner string, until, now time.Time) (string, []any) {
			return arg(st.acquireLease, []byte(name), []byte(owner), dbTime(until), dbTime(now))
		},
		LeaseOwnerSQL:   func(name string) (string, []any) { return arg(st.leaseOwner, []byte(name)) },
		ReleaseLeaseSQL: func(name, owner string) (string, []any) { return arg(st.releaseLease, []byte(name), []byte(owner)) },
		PutPropertySQL: func(jobID uuid.UUID, key, value string) (string, []any) {
			return arg(st.insertProperty, []byte(key), []byte(value), binID(jobID))
		},
		GetPropertySQL: func(jobID uuid.UUID, key string) (string, []any) {
			return arg(st.getProperty, []byte(key), binID(jobID))
		},
		JobFenceSQL: func(jobID uuid.UUID) (string, []any) { return arg(st.stateFence, binID(jobID)) },
		InitStateSQL: func(jobID uuid.UUID, ns string, state []byte) (string, []any) {
			return arg(st.insertState, binID(jobID), []byte(ns), state)
		},
		UpdateStateSQL: func(jobID uuid.UUID, ns string, state []byte, expected int64) (string, []any) {
			return arg(st.updateState, state, binID(jobID), []byte(ns), expected)
		},
		PendingTasksSQL: st.pendingTasks,
		TasksPerClaim:   tasksPerStatement,
		CandidatesSQL: func(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
			return candidatesSQL(st.t, compileTags(tags), tasks, dbTime(now), limit)
		},
		Holders: func(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
			return lockResources(ctx, tx, st.t, resources)
		},
		ClaimSQL: func(node string, now time.Time, ids []uuid.UUID) (string, []any) {
			return `UPDATE ` + st.t.job + ` SET status = 'RUNNING', owner_node = ?, claim_seq = claim_seq + 1, claimed_time = ?
			WHERE status = 'PENDING' AND job_id IN (` + marks(len(ids)) + `)`, append([]any{nullBinary(node), dbTime(now)}, idArgs(ids)...)
		},
		FailCorruptSQL: func(now time.Time, msg string, id []byte, _ int64) (string, []any) {
			return `UPDATE ` + st.t.job + ` SET status = 'FAILED', owner_node = NULL, finished_time = ?, last_error = ? WHERE job_id = ?`,
				[]any{dbTime(now), msg, id}
		},
		OrphansSQL:     st.orphansSQL,
		LockOrphansSQL: st.lockOrphansSQL,
		RequeueSQL:     st.requeueSQL,
		BurySQL:        st.burySQL,
		DeleteNodesSQL: st.deleteNodesSQL,
	}
}

// tagFilter is a spi.TagFilter in the form the claim statement takes.
type tagFilter struct {
	all, any, none []string // all without repeats
}

func compileTags(f spi.TagFilter) tagFilter {
	return tagFilter{all: uniqueTags(f.All), any: f.Any, none: f.None}
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
