package oracle

import (
	"errors"
	"strconv"
	"strings"

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

// emptyBlobsSQL stores EMPTY_BLOB() as the payload or result (column) of
// the jobs ids.
func emptyBlobsSQL(column string, ids [][]byte) (string, []any) {
	return syntax.SQL("UPDATE {job} SET "+column+" = EMPTY_BLOB() WHERE job_id IN (?)", sqlcore.In(idArgs(ids)))
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
	return syntax.SQL("SELECT job_id FROM {job} WHERE job_id IN (?) AND status = 'PENDING' FOR UPDATE SKIP LOCKED", sqlcore.In(idArgs(ids)))
}

// lockResourceSQL locks one resource's row, waiting for other claimers.
func lockResourceSQL(resource string) (string, []any) {
	return syntax.SQL("SELECT resource_name FROM scheduler_resource WHERE resource_name = ? FOR UPDATE", resource)
}

// insertResourceSQL creates one resource's row (locked until the commit).
func insertResourceSQL(resource string) (string, []any) {
	return syntax.SQL("INSERT INTO scheduler_resource (resource_name) VALUES (?)", resource)
}

// countHoldersSQL counts each resource's RUNNING jobs; the statement
// starts after the resources' rows are locked, so its snapshot sees every
// claim that held them before.
func countHoldersSQL(resources []string) (string, []any) {
	b := newBinds()
	var q strings.Builder
	q.WriteString("SELECT r.name, (SELECT COUNT(*) FROM scheduler_job j WHERE j.resource_name = r.name AND j.status = 'RUNNING') FROM (")
	for i, r := range resources {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString("SELECT CAST(" + b.Add(r) + " AS VARCHAR2(255 CHAR)) AS name FROM DUAL")
	}
	q.WriteString(") r")
	return q.String(), b.Args
}

// completeSQL applies completions, whose fence lockRunningSQL checked, in
// one PL/SQL block of the fenced UPDATEs (one round trip).
func completeSQL(cs []spi.Completion) (string, []any) {
	var q strings.Builder
	var args []any
	q.WriteString("BEGIN\n")
	for _, c := range cs {
		t, a := syntax.Completion(c)
		q.WriteString("\t" + t + ";\n")
		args = append(args, a...)
	}
	q.WriteString("END;")
	return syntax.SQL(q.String(), args...)
}

// The completions fence their writes with the dialect's Running.
func init() { dialect.WriteCompletions = writeCompletions }

// syntax is how Oracle writes the portable statements and its own: :N
// binds in order of appearance, RAW ids, TIMESTAMP binds, the empty string
// as NULL, LOBs for long values.
var syntax = sqlcore.Syntax{
	Mark:       func(i int) string { return ":" + strconv.Itoa(i) },
	JobColumns: jobColumns,
	ID:         func(id uuid.UUID) any { return dbID(id) },
	Time:       nullDBTime,
	Name:       text,
	NullName:   text,
	Text:       text,
	Long:       clobArg,
	Blob:       blobArg,
	EmptyBlob:  "EMPTY_BLOB()",
	// A BLOB is not compared with =.
	BlobEq:    func(col string) string { return "DBMS_LOB.COMPARE(" + col + ", ?) = 0" },
	LockOn:    " FOR UPDATE",
	Limit:     " FETCH FIRST ? ROWS ONLY",
	MaxArgs:   65535,
	EmptyNull: true,
	// The claim's candidates are read without locks: Oracle allows no
	// FETCH FIRST with FOR UPDATE, so the claim locks the ones it picks
	// afterwards, with SKIP LOCKED (see lockAndAdmit).
	// The fence of a state write locks the job's row: no claim,
	// completion or recovery changes it, and no other state write of the
	// job runs, until the commit.
	FenceOn: " FOR UPDATE",
	Now:     "SELECT SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL",
	// A unique key's row is made by a MERGE; two of a new key at once
	// may still meet the primary key, which the insert takes as the row
	// being there (IsDuplicate).
	UniqueReserve: "MERGE INTO {unique} u USING (SELECT ? AS unique_key FROM dual) s ON (u.unique_key = s.unique_key) " +
		"WHEN NOT MATCHED THEN INSERT (unique_key) VALUES (s.unique_key)",
	// An INSERT returns no rows: its identity comes back through an
	// output bind (RETURNING ... INTO).
	NewKey: sqlcore.KeyInto,
}

// database is Oracle's side of the contract with the shared store methods
// (sqlcore.Database).
type database struct{}

func (database) Name() string                      { return "the Oracle store" }
func (database) Syntax() sqlcore.Syntax            { return syntax }
func (database) InsertSizes() (rows, tags int)     { return rowsPerInsert, tagsPerInsert }
func (database) IDText(b []byte) string            { return idText(b) }
func (database) Tags(col string) ([]string, error) { return sqlcore.JSONTags(col) }
func (database) PropertiesByPrefixSQL(id uuid.UUID, prefix string) (string, []any) {
	return propertiesByPrefixSQL(dbID(id), prefix)
}

// dialect is Oracle's part of the shared store methods: the portable
// statements in its syntax, and its own where Oracle's SQL differs.
var dialect = sqlcore.Compile[[]byte](database{}, sqlcore.Dialect[[]byte]{
	AfterInsert:     emptyBlobs,
	ValidateJobs:    validateJobs,
	InsertRetryable: insertRetryable,
	CheckState: func(w sqlcore.StateWrite) error {
		if w.Namespace == "" {
			return errors.New("empty namespace, which Oracle cannot store")
		}
		return nil
	},
	PendingTasksSQL: pendingTasksSQL,
	OldestDueSQL:    sqlcore.OldestDuePlain(&syntax),
	TasksPerClaim:   tasksPerStatement,
	Pick:            lockAndAdmit,
	TimeOf:          sqlcore.WallClock,
	MaxIDs:          idsPerList,
	IsDuplicate:     func(err error) bool { return isUniqueViolation(err, "") },
})

// propertiesByPrefixSQL reads the job's properties whose key starts with
// prefix, compared character by character (no wildcards, no case
// folding); the job's row even without properties.
func propertiesByPrefixSQL(id []byte, prefix string) (string, []any) {
	b := newBinds()
	cond := ""
	if prefix != "" {
		cond = " AND SUBSTR(p.prop_key, 1, LENGTH(" + b.Add(prefix) + ")) = " + b.Add(prefix)
	}
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id` + cond + `
	WHERE j.job_id = ` + b.Add(id), b.Args
}
