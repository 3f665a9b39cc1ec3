package mysql

import (
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// database is MySQL's side of the contract with the shared store methods
// (sqlcore.Database), on one database: its syntax qualifies every table by
// that database.
type database struct{ syntax sqlcore.Syntax }

func (database) Name() string                  { return "the MySQL store" }
func (d database) Syntax() sqlcore.Syntax      { return d.syntax }
func (database) InsertSizes() (rows, tags int) { return rowsPerInsert, tagsPerInsert }

// PropertiesByPrefixSQL reads the properties of a prefix: the columns are
// VARBINARY, so LEFT counts bytes and = compares them, no character of the
// prefix is a wildcard and case matters.
func (d database) PropertiesByPrefixSQL(id uuid.UUID, prefix string) (string, []any) {
	return d.syntax.SQL(`SELECT p.prop_key, p.prop_value FROM {job} j
	LEFT JOIN {prop} p ON p.job_id = j.job_id AND LEFT(p.prop_key, ?) = ?
	WHERE j.job_id = ?`, int64(len(prefix)), []byte(prefix), binID(id))
}

// dialectOf returns the statements and facts of the shared store methods
// on the database named db: the portable statements in MySQL's syntax,
// every table qualified by the database, and its own where MySQL's SQL
// differs.
func dialectOf(db string) sqlcore.Dialect[[]byte] {
	s := sqlcore.Syntax{
		Mark:     func(int) string { return "?" },
		Table:    func(name string) string { return quoteIdent(db) + "." + quoteIdent(name) },
		ID:       func(id uuid.UUID) any { return binID(id) },
		Time:     nullDBTime,
		Name:     func(s string) any { return []byte(s) },
		NullName: nullBinary,
		LockOn:   " FOR UPDATE",
		Limit:    " LIMIT ?",
		// MySQL has no INSERT ... RETURNING: an auto-increment key comes
		// back as the result's LastInsertId.
		NewKey: sqlcore.KeyLastInsertID,
		// A page of one status is read through idx_scheduler_job_status
		// (status, job_id), in index order: the optimizer may otherwise
		// pick the claim index and sort every row of the status.
		StatusHint: " FORCE INDEX (idx_scheduler_job_status)",
		// The RUNNING jobs among a list of ids are found by the list.
		IDHint: " FORCE INDEX (PRIMARY)",
		// The keys are read with a locking read, so that rows committed
		// after the transaction's snapshot are seen.
		KeyLock: " LOCK IN SHARE MODE",
		// The claim's scans lock the candidates they return, skipping
		// those other claimers hold; their subqueries (tags, holders)
		// take no locks, a locking clause applying to the query block it
		// ends only.
		ScanHint:   " FORCE INDEX (idx_scheduler_job_claim)",
		ScanLock:   " FOR UPDATE SKIP LOCKED",
		ScanParens: true,
		ScanGuard:  true,
		// The state writes read the job's fence with a shared lock: from
		// the latest committed row, and no claim, completion, release or
		// recovery can change the job until the write commits.
		FenceOn: " LOCK IN SHARE MODE",
		// A unique key's row is made with an upsert that locks it
		// exclusively at once: INSERT IGNORE would take a shared lock,
		// and two inserts of the key upgrading theirs would deadlock.
		UniqueReserve: "INSERT INTO {unique} (unique_key) VALUES (?) ON DUPLICATE KEY UPDATE unique_key = unique_key",
		Now:           "SELECT UTC_TIMESTAMP(6)",
		RateRecord:    "INSERT INTO {rate} (resource_name, started_time, starts) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE starts = starts + VALUES(starts)",
		// A batch child's status is read through the virtual column of
		// idx_scheduler_job_workflow_status (migration 10).
		BatchStatus: "batch_status",
		// The claim and the counts of a resource's holders read the
		// virtual columns that key their indexes (migration 13).
		ClaimTask:      "claim_task",
		ResourceStatus: "resource_status",
	}
	s.JobColumns, _ = s.SQL(jobColumnsTemplate)
	return sqlcore.Compile[[]byte](database{s}, sqlcore.Dialect[[]byte]{
		MaxIDs:          1000,
		IsDuplicate:     func(err error) bool { return serverError.Is(err, "", errDuplicateKey) },
		RowBytes:        rowSize,
		InsertRetryable: insertRetryable,
		TasksPerClaim:   tasksPerStatement,
		// The orphans are found with a plain read (a range of the
		// RUNNING rows), then locked in id order by primary key and
		// checked again, so that a completion or a concurrent
		// recovery that gets there first wins, and no gap of the index is
		// locked.
		OrphansSQL: func(cutoff time.Time, nodes []string) (string, []any) {
			return s.SQL(orphansSQL("")+" ORDER BY j.job_id", orphanArgs(cutoff, nodes)...)
		},
		LockOrphansSQL: func(cutoff time.Time, nodes []string, ids [][]byte) (string, []any) {
			return s.SQL(orphansSQL("j.job_id IN (?) AND ")+" ORDER BY j.job_id FOR UPDATE", append([]any{sqlcore.In(anys(ids))}, orphanArgs(cutoff, nodes)...)...)
		},
	})
}

// orphansSQL reads the RUNNING jobs (and those of cond) without a fresh node
// row (a count on the node's primary key, evaluated per RUNNING job; NOT
// EXISTS may be planned as a scan of the node table) or owned by one of
// the nodes named: its arguments are orphanArgs.
func orphansSQL(cond string) string {
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority FROM {job} j
	WHERE ` + cond + `j.status = 'RUNNING' AND (j.owner_node IS NULL
		OR (SELECT COUNT(*) FROM {node} n WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= ?) = 0
		OR j.owner_node IN (?))`
}

// orphanArgs are the arguments of orphansSQL: the cutoff, the nodes (NULL
// for none, which no owner equals).
func orphanArgs(cutoff time.Time, nodes []string) []any {
	named := sqlcore.In(binArgs(nodes))
	if len(nodes) == 0 {
		named = sqlcore.In{nil}
	}
	return []any{dbTime(cutoff), named}
}

// tasksPerStatement bounds the tasks of one candidates statement (five
// subqueries each), well inside the 65,535 placeholders of a statement.
const tasksPerStatement = 50
