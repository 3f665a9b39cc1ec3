package oracle

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// The statements of the store. go-ora binds the arguments of a statement
// by position to its placeholders :1, :2, ... in order of appearance;
// every builder below numbers them so, binding a value twice when a
// statement uses it twice. Statements whose shape depends on a count (rows
// of a batch, ids of an IN list, tags of a filter) are built per call;
// Oracle caches one cursor per distinct text. Status values are literals,
// never binds.

// Batch sizes. Oracle allows at most 1,000 expressions in an IN list
// (ORA-01795); the multi-row inserts stay far below its bind limit.
const (
	rowsPerInsert  = 40 // 22 binds a row
	tagsPerInsert  = 200
	idsPerList     = 500
	rowsPerComplet = 100 // updates per PL/SQL block
)

// insertColumns are the columns InsertJobs writes; status comes from the
// literal 'PENDING' in each row.
const insertColumns = `job_id, task_name, payload, status, priority, scheduled_time, created_time,
	attempts, max_retries, backoff_kind, backoff_param_us, claim_seq, crash_count, owner_node,
	claimed_time, finished_time, last_error, job_result, result_type, idempotency_key, params,
	resource_name, resource_limit`

// numInsertArgs is the number of binds of one inserted row.
const numInsertArgs = 22

// insertJobsSQL inserts jobs with one multi-row INSERT (a table value
// constructor, Oracle 23ai). An empty, non-nil payload or result is bound
// NULL; emptyBlobsSQL then writes EMPTY_BLOB().
func insertJobsSQL(jobs []*spi.Job) (string, []any, error) {
	var b binds
	var q strings.Builder
	q.WriteString("INSERT INTO scheduler_job (" + insertColumns + ") VALUES ")
	for r, j := range jobs {
		var params any
		if j.Params != nil {
			p, err := json.Marshal(j.Params)
			if err != nil {
				return "", nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
			}
			params = clobArg(string(p))
		}
		if r > 0 {
			q.WriteString(",\n\t")
		}
		fmt.Fprintf(&q, "(%s, %s, %s, 'PENDING', %s)",
			b.add(dbID(j.ID)), b.add(text(j.TaskName)), b.add(blobArg(j.Payload)),
			b.list([]any{
				int64(j.Priority), dbTime(j.ScheduledAt), nullDBTime(j.CreatedAt),
				int64(j.Attempts), int64(j.MaxRetries), text(string(j.Backoff)), j.BackoffParam.Microseconds(),
				j.ClaimSeq, int64(j.CrashCount), text(j.OwnerNode),
				nullDBTime(j.ClaimedAt), nullDBTime(j.FinishedAt), clobArg(j.LastError),
				blobArg(j.Result), text(j.ResultType), text(j.IdempotencyKey), params,
				text(j.Resource), int64(j.ResourceLimit),
			}))
	}
	return q.String(), b.args, nil
}

// emptyBlobsSQL stores EMPTY_BLOB() as the payload or result (column) of
// the jobs ids.
func emptyBlobsSQL(column string, ids [][]byte) (string, []any) {
	var b binds
	return "UPDATE scheduler_job SET " + column + " = EMPTY_BLOB() WHERE job_id IN (" + b.list(idArgs(ids)) + ")", b.args
}

// insertTagsSQL inserts (job_id, tag) rows given as pairs of binds.
func insertTagsSQL(tags []sqlcore.JobTag) (string, []any) {
	var b binds
	var q strings.Builder
	q.WriteString("INSERT INTO scheduler_job_tag (job_id, tag) VALUES ")
	for i, t := range tags {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "(%s, %s)", b.add(dbID(t.ID)), b.add(t.Tag))
	}
	return q.String(), b.args
}

// existingKeysSQL finds which of the idempotency keys exist.
func existingKeysSQL(keys []string) (string, []any) {
	var b binds
	return "SELECT idempotency_key, job_id FROM scheduler_job WHERE idempotency_key IN (" + b.list(anys(keys)) + ")", b.args
}

// getJobSQL reads one job.
func getJobSQL(id []byte) (string, []any) {
	var b binds
	return "SELECT " + jobColumns + "\n\tFROM scheduler_job j WHERE j.job_id = " + b.add(id), b.args
}

// listJobsSQL reads a page of at most limit jobs after the id after, of
// one status (a literal) or of any ("").
func listJobsSQL(after []byte, status spi.Status, limit int) (string, []any) {
	var b binds
	q := "SELECT " + jobColumns + "\n\tFROM scheduler_job j WHERE j.job_id > " + b.add(after)
	if status != "" {
		q += " AND j.status = '" + string(status) + "'"
	}
	return q + "\n\tORDER BY j.job_id FETCH FIRST " + b.add(int64(limit)) + " ROWS ONLY", b.args
}

// tagFilter is a spi.TagFilter in the form the claim statement takes.
type tagFilter struct {
	all, any, none []any // tags as binds; All without repeats
}

func compileTags(f spi.TagFilter) tagFilter {
	var tf tagFilter
	seen := map[string]bool{}
	for _, t := range f.All {
		if !seen[t] {
			seen[t] = true
			tf.all = append(tf.all, text(t))
		}
	}
	for _, t := range f.Any {
		tf.any = append(tf.any, text(t))
	}
	for _, t := range f.None {
		tf.none = append(tf.none, text(t))
	}
	return tf
}

// claimCandidatesSQL selects, for each task and priority level from
// CRITICAL down, the first limit due PENDING jobs of the task in
// (scheduled_time, job_id) order that the node may run: one range scan of
// the task-led idx_scheduler_job_claim per task and level, so jobs of tasks
// the claim does not list are never read, without locks (the claim locks
// the ones it picks with SKIP LOCKED afterwards: Oracle allows no FETCH
// FIRST with FOR UPDATE). Jobs whose resource is full and jobs failing the
// tag filter are passed over inside the scans.
func claimCandidatesSQL(now time.Time, limit int, tasks []string, tf tagFilter) (string, []any) {
	var b binds
	var q strings.Builder
	for i, task := range tasks {
		for lvl := spi.NumPriorities - 1; lvl >= 0; lvl-- {
			if i > 0 || lvl != spi.NumPriorities-1 {
				q.WriteString("\nUNION ALL\n")
			}
			fmt.Fprintf(&q, `SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = %s AND x.priority = %d AND x.scheduled_time <= %s
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)`, b.add(text(task)), lvl, b.add(dbTime(now)))
			if len(tf.all) > 0 {
				fmt.Fprintf(&q, `
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (%s)) = %s`,
					b.list(tf.all), b.add(int64(len(tf.all))))
			}
			if len(tf.any) > 0 {
				fmt.Fprintf(&q, `
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (%s))`, b.list(tf.any))
			}
			if len(tf.none) > 0 {
				fmt.Fprintf(&q, `
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (%s))`, b.list(tf.none))
			}
			fmt.Fprintf(&q, `
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST %s ROWS ONLY)`, b.add(int64(limit)))
		}
	}
	return q.String(), b.args
}

// tasksPerStatement bounds the tasks of one candidates statement (five
// subqueries each), well inside Oracle's 65,535 bind variables.
const tasksPerStatement = 50

// pendingTasksSQL reads the distinct tasks of the PENDING jobs, for a
// claim of any task (tools and tests; the engine always lists its tasks).
const pendingTasksSQL = `SELECT DISTINCT task_name FROM scheduler_job WHERE status = 'PENDING'`

// lockCandidatesSQL locks those of ids that are still PENDING, skipping
// the rows other sessions hold, and returns them.
func lockCandidatesSQL(ids [][]byte) (string, []any) {
	var b binds
	return "SELECT job_id FROM scheduler_job WHERE job_id IN (" + b.list(idArgs(ids)) + ") AND status = 'PENDING' FOR UPDATE SKIP LOCKED", b.args
}

// lockResourceSQL locks one resource's row, waiting for other claimers.
func lockResourceSQL(resource string) (string, []any) {
	var b binds
	return "SELECT resource_name FROM scheduler_resource WHERE resource_name = " + b.add(resource) + " FOR UPDATE", b.args
}

// insertResourceSQL creates one resource's row (locked until the commit).
func insertResourceSQL(resource string) (string, []any) {
	var b binds
	return "INSERT INTO scheduler_resource (resource_name) VALUES (" + b.add(resource) + ")", b.args
}

// countHoldersSQL counts each resource's RUNNING jobs; the statement
// starts after the resources' rows are locked, so its snapshot sees every
// claim that held them before.
func countHoldersSQL(resources []string) (string, []any) {
	var b binds
	var q strings.Builder
	q.WriteString("SELECT r.name, (SELECT COUNT(*) FROM scheduler_job j WHERE j.resource_name = r.name AND j.status = 'RUNNING') FROM (")
	for i, r := range resources {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString("SELECT CAST(" + b.add(r) + " AS VARCHAR2(255 CHAR)) AS name FROM DUAL")
	}
	q.WriteString(") r")
	return q.String(), b.args
}

// claimSQL moves the locked jobs ids to RUNNING for node at now.
func claimSQL(node string, now time.Time, ids []uuid.UUID) (string, []any) {
	var b binds
	return "UPDATE scheduler_job SET status = 'RUNNING', owner_node = " + b.add(text(node)) +
		", claim_seq = claim_seq + 1, claimed_time = " + b.add(dbTime(now)) +
		"\n\tWHERE job_id IN (" + b.list(uuidArgs(ids)) + ") AND status = 'PENDING'", b.args
}

// jobsSQL reads the jobs ids.
func jobsSQL(ids []uuid.UUID) (string, []any) {
	var b binds
	return "SELECT " + jobColumns + "\n\tFROM scheduler_job j WHERE j.job_id IN (" + b.list(uuidArgs(ids)) + ")", b.args
}

// adoptSQL reads, after a claim whose commit failed with its outcome
// unknown, which of its jobs it did take: RUNNING, claimed at now (the
// owner is checked by the caller).
func adoptSQL(now time.Time, ids []uuid.UUID) (string, []any) {
	var b binds
	q := "SELECT " + jobColumns + "\n\tFROM scheduler_job j WHERE j.job_id IN (" + b.list(uuidArgs(ids)) + ")"
	return q + " AND j.status = 'RUNNING' AND j.claimed_time = " + b.add(dbTime(now)), b.args
}

// failCorruptSQL fails a claimed row that cannot be decoded, fenced by the
// claim that took it, or (seq < 0) a candidate whose id cannot be read.
func failCorruptSQL(now time.Time, msg string, id []byte, seq int64) (string, []any) {
	var b binds
	q := "UPDATE scheduler_job SET status = 'FAILED', owner_node = NULL, finished_time = " + b.add(dbTime(now)) +
		", last_error = " + b.add(clobArg(msg)) + "\n\tWHERE job_id = " + b.add(id)
	if seq < 0 {
		return q + " AND status = 'PENDING'", b.args
	}
	return q + " AND claim_seq = " + b.add(seq) + " AND status = 'RUNNING'", b.args
}

// runningSQL returns the claim sequences of the RUNNING jobs among ids,
// locking them in id order with lock: the fence of a batch of owner
// writes, checked under lock.
func runningSQL(ids []uuid.UUID, lock bool) (string, []any) {
	var b binds
	q := "SELECT job_id, claim_seq FROM scheduler_job WHERE job_id IN (" + b.list(uuidArgs(ids)) + ") AND status = 'RUNNING'"
	if lock {
		q += " ORDER BY job_id FOR UPDATE"
	}
	return q, b.args
}

// completeSQL applies completions, whose fence lockRunningSQL checked, in
// one PL/SQL block of fenced UPDATEs (one round trip). A success sets the
// finish time, result (EMPTY_BLOB() for an empty one) and result type; a
// retry sets the due time, attempts and error and clears the owner; a
// failure sets the finish time, attempts and error.
func completeSQL(cs []spi.Completion) (string, []any) {
	var b binds
	var q strings.Builder
	q.WriteString("BEGIN\n")
	for _, c := range cs {
		switch c.Outcome {
		case spi.OutcomeSucceeded:
			fin := b.add(nullDBTime(c.FinishedAt))
			result := "EMPTY_BLOB()"
			if !isEmptyBlob(c.Result) {
				result = b.add(blobArg(c.Result))
			}
			fmt.Fprintf(&q, "\tUPDATE scheduler_job SET status = 'SUCCEEDED', finished_time = %s, job_result = %s, result_type = %s",
				fin, result, b.add(text(c.ResultType)))
		case spi.OutcomeRetry:
			fmt.Fprintf(&q, "\tUPDATE scheduler_job SET status = 'PENDING', scheduled_time = %s, attempts = %s, last_error = %s, owner_node = NULL",
				b.add(dbTime(c.RetryAt)), b.add(int64(c.Attempts)), b.add(clobArg(c.LastError)))
		case spi.OutcomeFailed:
			fmt.Fprintf(&q, "\tUPDATE scheduler_job SET status = 'FAILED', finished_time = %s, attempts = %s, last_error = %s",
				b.add(nullDBTime(c.FinishedAt)), b.add(int64(c.Attempts)), b.add(clobArg(c.LastError)))
		}
		fmt.Fprintf(&q, "\n\t\tWHERE job_id = %s AND claim_seq = %s AND status = 'RUNNING';\n", b.add(dbID(c.JobID)), b.add(c.ClaimSeq))
	}
	q.WriteString("END;")
	return q.String(), b.args
}

// releaseSQL puts the locked, current claims ids back to PENDING due at
// now, advancing the claim sequence.
func releaseSQL(now time.Time, ids []uuid.UUID) (string, []any) {
	var b binds
	return "UPDATE scheduler_job SET status = 'PENDING', owner_node = NULL, scheduled_time = " + b.add(dbTime(now)) +
		", claim_seq = claim_seq + 1\n\tWHERE job_id IN (" + b.list(uuidArgs(ids)) + ") AND status = 'RUNNING'", b.args
}

// The completions fence their writes with the dialect's Running.
func init() { dialect.WriteCompletions = writeCompletions }

// dialect is Oracle's part of the shared store methods.
var dialect = sqlcore.Dialect[[]byte]{
	GetJobSQL: func(id uuid.UUID) (string, []any) { return getJobSQL(dbID(id)) },
	ListJobsSQL: func(after uuid.UUID, status spi.Status, limit int) (string, []any) {
		return listJobsSQL(dbID(after), status, limit)
	},
	ExistingKeysSQL: existingKeysSQL,
	InsertJobsSQL:   insertJobsSQL,
	InsertTagsSQL:   insertTagsSQL,
	RowsPerInsert:   rowsPerInsert,
	TagsPerInsert:   tagsPerInsert,
	AfterInsert:     emptyBlobs,
	ValidateJobs:    validateJobs,
	InsertRetryable: insertRetryable,
	TxName:          "the Oracle store",
	RetryFailedSQL:  func(id uuid.UUID, now time.Time) (string, []any) { return retryFailedSQL(now, dbID(id)) },
	CancelSQL:       func(id uuid.UUID, now time.Time) (string, []any) { return cancelSQL(now, dbID(id)) },
	StatusSQL:       func(id uuid.UUID) (string, []any) { return statusSQL(dbID(id)) },
	GetStateSQL:     func(id uuid.UUID, ns string) (string, []any) { return getStateSQL(dbID(id), ns) },
	CheckState: func(w sqlcore.StateWrite) error {
		if w.Namespace == "" {
			return errors.New("empty namespace, which Oracle cannot store")
		}
		return nil
	},
	PropertiesByPrefixSQL: func(id uuid.UUID, prefix string) (string, []any) {
		return propertiesByPrefixSQL(dbID(id), prefix)
	},
	FindByPropertySQL: findByPropertySQL,
	HeartbeatTasksSQL: heartbeatTasksSQL,
	LiveNodesSQL:      func(since time.Time) (string, []any) { return liveNodesSQL, []any{dbTime(since)} },
	PendingCountSQL:   pendingCountSQL,
	PendingTasksSQL:   pendingTasksSQL,
	TasksPerClaim:     tasksPerStatement,
	CandidatesSQL: func(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
		return claimCandidatesSQL(now, limit, tasks, compileTags(tags))
	},
	Holders:         lockResources,
	Pick:            lockAndAdmit,
	ClaimSQL:        claimSQL,
	JobsSQL:         jobsSQL,
	AdoptSQL:        adoptSQL,
	FailCorruptSQL:  failCorruptSQL,
	IDText:          idText,
	TimeOf:          sqlcore.WallClock,
	Tags:            sqlcore.JSONTags,
	ParseID:         parseID,
	MaxIDs:          idsPerList,
	IsDuplicate:     func(err error) bool { return isUniqueViolation(err, "") },
	HeartbeatSQL:    heartbeatSQL,
	DeregisterSQL:   deregisterSQL,
	RunningSQL:      runningSQL,
	ReleaseSQL:      releaseSQL,
	AcquireLeaseSQL: acquireLeaseSQL,
	LeaseOwnerSQL:   leaseOwnerSQL,
	ReleaseLeaseSQL: releaseLeaseSQL,
	PutPropertySQL:  func(id uuid.UUID, key, value string) (string, []any) { return putPropertySQL(dbID(id), key, value) },
	GetPropertySQL:  func(id uuid.UUID, key string) (string, []any) { return getPropertySQL(dbID(id), key) },
	JobFenceSQL:     func(id uuid.UUID) (string, []any) { return jobFenceSQL(dbID(id)) },
	InitStateSQL: func(id uuid.UUID, ns string, state []byte) (string, []any) {
		return initStateSQL(dbID(id), ns, state)
	},
	UpdateStateSQL: func(id uuid.UUID, ns string, state []byte, expected int64) (string, []any) {
		return updateStateSQL(dbID(id), ns, state, expected)
	},
	OrphansSQL:     orphansSQL,
	RequeueSQL:     requeueSQL,
	BurySQL:        buryCrashedSQL,
	DeleteNodesSQL: deleteNodesSQL,
}

// retryFailedSQL resets a FAILED job.
func retryFailedSQL(now time.Time, id []byte) (string, []any) {
	var b binds
	return `UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = 0, crash_count = 0,
		scheduled_time = ` + b.add(dbTime(now)) + `, finished_time = NULL, owner_node = NULL
	WHERE job_id = ` + b.add(id) + ` AND status = 'FAILED'`, b.args
}

// cancelSQL cancels a PENDING job.
func cancelSQL(now time.Time, id []byte) (string, []any) {
	var b binds
	return "UPDATE scheduler_job SET status = 'CANCELLED', finished_time = " + b.add(dbTime(now)) +
		"\n\tWHERE job_id = " + b.add(id) + " AND status = 'PENDING'", b.args
}

// statusSQL reads a job's status.
func statusSQL(id []byte) (string, []any) {
	var b binds
	return "SELECT status FROM scheduler_job WHERE job_id = " + b.add(id), b.args
}

// heartbeatSQL registers a node or refreshes its heartbeat (MERGE).
func heartbeatSQL(node string, now time.Time) (string, []any) {
	var b binds
	return `MERGE INTO scheduler_node n
	USING (SELECT CAST(` + b.add(text(node)) + ` AS VARCHAR2(255 CHAR)) AS node_id, CAST(` + b.add(dbTime(now)) + ` AS TIMESTAMP(6)) AS ts FROM DUAL) s
	ON (n.node_id = s.node_id)
	WHEN MATCHED THEN UPDATE SET n.heartbeat_ts = s.ts
	WHEN NOT MATCHED THEN INSERT (node_id, heartbeat_ts) VALUES (s.node_id, s.ts)`, b.args
}

// heartbeatTasksSQL is heartbeatSQL that records the node's tasks (their
// stored form) too.
func heartbeatTasksSQL(node, tasks string, now time.Time) (string, []any) {
	var b binds
	return `MERGE INTO scheduler_node n
	USING (SELECT CAST(` + b.add(text(node)) + ` AS VARCHAR2(255 CHAR)) AS node_id, CAST(` + b.add(dbTime(now)) + ` AS TIMESTAMP(6)) AS ts,
		TO_CLOB(` + b.add(tasks) + `) AS task_names FROM DUAL) s
	ON (n.node_id = s.node_id)
	WHEN MATCHED THEN UPDATE SET n.heartbeat_ts = s.ts, n.task_names = s.task_names
	WHEN NOT MATCHED THEN INSERT (node_id, heartbeat_ts, task_names) VALUES (s.node_id, s.ts, s.task_names)`, b.args
}

// liveNodesSQL and pendingCountSQL are the reads of spi.NodeTaskStore.
var (
	liveNodesSQL    = sqlcore.LiveNodesSQL("scheduler_node", ":1")
	pendingCountSQL = sqlcore.PendingTasksCountSQL("scheduler_job")
)

// deregisterSQL deletes a node's row.
func deregisterSQL(node string) (string, []any) {
	var b binds
	return "DELETE FROM scheduler_node WHERE node_id = " + b.add(text(node)), b.args
}

// orphansSQL locks and returns, in id order, the RUNNING jobs whose owner
// has no node row with a heartbeat at or after cutoff, or is one of nodes.
func orphansSQL(cutoff time.Time, nodes []string) (string, []any) {
	var b binds
	named := ""
	if len(nodes) > 0 {
		vs := make([]any, len(nodes))
		for i, n := range nodes {
			vs[i] = text(n)
		}
		named = "j.owner_node IN (" + b.list(vs) + ") OR "
	}
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority FROM scheduler_job j
	WHERE j.status = 'RUNNING' AND (` + named + `NOT EXISTS (SELECT 1 FROM scheduler_node n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= ` + b.add(dbTime(cutoff)) + `))
	ORDER BY j.job_id FOR UPDATE`, b.args
}

// requeueSQL puts recovered jobs back to PENDING due at now, charging the
// crash budget.
func requeueSQL(now time.Time, ids [][]byte) (string, []any) {
	var b binds
	return "UPDATE scheduler_job SET status = 'PENDING', crash_count = crash_count + 1, scheduled_time = " + b.add(dbTime(now)) +
		", claim_seq = claim_seq + 1, owner_node = NULL\n\tWHERE job_id IN (" + b.list(idArgs(ids)) + ")", b.args
}

// buryCrashedSQL fails recovered jobs whose crash budget is spent.
func buryCrashedSQL(now time.Time, lastError string, ids [][]byte) (string, []any) {
	var b binds
	return "UPDATE scheduler_job SET status = 'FAILED', last_error = " + b.add(clobArg(lastError)) + ", finished_time = " + b.add(dbTime(now)) +
		", claim_seq = claim_seq + 1, owner_node = NULL\n\tWHERE job_id IN (" + b.list(idArgs(ids)) + ")", b.args
}

// deleteNodesSQL deletes the node rows with a heartbeat before cutoff and
// those of nodes.
func deleteNodesSQL(cutoff time.Time, nodes []string) (string, []any) {
	var b binds
	q := "DELETE FROM scheduler_node WHERE heartbeat_ts < " + b.add(dbTime(cutoff))
	if len(nodes) > 0 {
		vs := make([]any, len(nodes))
		for i, n := range nodes {
			vs[i] = text(n)
		}
		q += " OR node_id IN (" + b.list(vs) + ")"
	}
	return q, b.args
}

// acquireLeaseSQL renews or takes over the lease when owner holds it or it
// expired, and creates it when missing (MERGE).
func acquireLeaseSQL(name, owner string, expires, now time.Time) (string, []any) {
	var b binds
	return `MERGE INTO scheduler_lease l
	USING (SELECT CAST(` + b.add(name) + ` AS VARCHAR2(255 CHAR)) AS name, CAST(` + b.add(owner) + ` AS VARCHAR2(255 CHAR)) AS owner,
		CAST(` + b.add(dbTime(expires)) + ` AS TIMESTAMP(6)) AS expires_at, CAST(` + b.add(dbTime(now)) + ` AS TIMESTAMP(6)) AS now FROM DUAL) s
	ON (l.name = s.name)
	WHEN MATCHED THEN UPDATE SET l.owner = s.owner, l.expires_at = s.expires_at
		WHERE l.owner = s.owner OR l.expires_at <= s.now
	WHEN NOT MATCHED THEN INSERT (name, owner, expires_at) VALUES (s.name, s.owner, s.expires_at)`, b.args
}

// leaseOwnerSQL reads a lease's owner.
func leaseOwnerSQL(name string) (string, []any) {
	var b binds
	return "SELECT owner FROM scheduler_lease WHERE name = " + b.add(name), b.args
}

// releaseLeaseSQL frees a lease held by owner.
func releaseLeaseSQL(name, owner string) (string, []any) {
	var b binds
	return "DELETE FROM scheduler_lease WHERE name = " + b.add(name) + " AND owner = " + b.add(owner), b.args
}

// jobFenceSQL locks the job's row and reads its status and claim
// sequence, so that no claim, completion or recovery changes them, and no
// other state write of the job runs, until the commit.
func jobFenceSQL(id []byte) (string, []any) {
	var b binds
	return "SELECT status, claim_seq FROM scheduler_job WHERE job_id = " + b.add(id) + " FOR UPDATE", b.args
}

// getStateSQL reads the job (NULL state when the namespace has none).
func getStateSQL(id []byte, ns string) (string, []any) {
	var b binds
	return `SELECT s.state_json, s.version FROM scheduler_job j
	LEFT JOIN scheduler_job_state s ON s.job_id = j.job_id AND s.namespace = ` + b.add(text(ns)) + `
	WHERE j.job_id = ` + b.add(id), b.args
}

// initStateSQL creates a namespace's state at version 0 unless it exists.
func initStateSQL(id []byte, ns string, state []byte) (string, []any) {
	var b binds
	return "INSERT INTO scheduler_job_state (job_id, namespace, state_json, version)\n\tSELECT " +
		b.add(id) + ", " + b.add(text(ns)) + ", " + b.add(blobArg(state)) + ", 0 FROM DUAL" +
		"\n\tWHERE NOT EXISTS (SELECT 1 FROM scheduler_job_state WHERE job_id = " + b.add(id) + " AND namespace = " + b.add(text(ns)) + ")", b.args
}

// updateStateSQL replaces a namespace's state at the expected version.
func updateStateSQL(id []byte, ns string, state []byte, expected int64) (string, []any) {
	var b binds
	return "UPDATE scheduler_job_state SET state_json = " + b.add(blobArg(state)) + ", version = version + 1\n\tWHERE job_id = " +
		b.add(id) + " AND namespace = " + b.add(text(ns)) + " AND version = " + b.add(expected), b.args
}

// getPropertySQL reads the job (NULL key and value when the key is
// unset). The key is selected too: an empty value is NULL in Oracle.
func getPropertySQL(id []byte, key string) (string, []any) {
	var b binds
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id AND p.prop_key = ` + b.add(key) + `
	WHERE j.job_id = ` + b.add(id), b.args
}

// putPropertySQL inserts a property when the job exists and the key is
// free (a racing writer of the key makes it fail with a unique
// violation).
func putPropertySQL(id []byte, key, value string) (string, []any) {
	var b binds
	return "INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)\n\tSELECT j.job_id, " + b.add(key) + ", " + b.add(text(value)) +
		" FROM scheduler_job j WHERE j.job_id = " + b.add(id) +
		"\n\tAND NOT EXISTS (SELECT 1 FROM scheduler_job_property p WHERE p.job_id = j.job_id AND p.prop_key = " + b.add(key) + ")", b.args
}

// propertiesByPrefixSQL reads the job's properties whose key starts with
// prefix, compared character by character (no wildcards, no case
// folding); the job's row even without properties.
func propertiesByPrefixSQL(id []byte, prefix string) (string, []any) {
	var b binds
	cond := ""
	if prefix != "" {
		cond = " AND SUBSTR(p.prop_key, 1, LENGTH(" + b.add(prefix) + ")) = " + b.add(prefix)
	}
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id` + cond + `
	WHERE j.job_id = ` + b.add(id), b.args
}

// findByPropertySQL lists the jobs whose property key equals value (NULL
// for the empty value), in id order, at most limit when limit > 0.
func findByPropertySQL(key, value string, limit int) (string, []any) {
	var b binds
	q := "SELECT job_id FROM scheduler_job_property WHERE prop_key = " + b.add(key)
	if value == "" {
		q += " AND prop_value IS NULL"
	} else {
		q += " AND prop_value = " + b.add(value)
	}
	q += " ORDER BY job_id"
	if limit > 0 {
		q += " FETCH FIRST " + b.add(int64(limit)) + " ROWS ONLY"
	}
	return q, b.args
}
