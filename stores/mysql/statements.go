package mysql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// statements holds the store's fixed SQL that is MySQL's own (the portable
// statements are sqlcore's, see dialect), with table names qualified by its
// database. Statements whose shape depends on a batch (IN lists, multi-row
// VALUES) are built per call from the qualified names in t.
type statements struct {
	t                      tables
	jobColumns             string
	listJobs, listByStatus string
	propertiesByPrefix     string
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
		// The claim's scans lock the candidates they return, skipping
		// those other claimers hold; their subqueries (tags, holders)
		// take no locks, a locking clause applying to the query block it
		// ends only.
		ScanHint:   " FORCE INDEX (idx_scheduler_job_claim)",
		ScanLock:   " FOR UPDATE SKIP LOCKED",
		ScanParens: true,
		// The state writes read the job's fence with a shared lock: from
		// the latest committed row, and no claim, completion, release or
		// recovery can change the job until the write commits.
		FenceOn: " LOCK IN SHARE MODE",
	}, sqlcore.Dialect[[]byte]{
		ParseID:         scanID,
		IDText:          idText,
		Tags:            hexTags,
		MaxIDs:          1000,
		IsDuplicate:     func(err error) bool { return serverError.Is(err, "", errDuplicateKey) },
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
		TasksPerClaim: tasksPerStatement,
		Holders: func(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
			return lockResources(ctx, tx, st.t, resources)
		},
		OrphansSQL:     st.orphansSQL,
		LockOrphansSQL: st.lockOrphansSQL,
	})
}

// tasksPerStatement bounds the tasks of one candidates statement (five
// subqueries each), well inside the 65,535 placeholders of a statement.
const tasksPerStatement = 50
