package sqlserver

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// The statements of the store. go-mssqldb sends the arguments of a
// statement as the parameters @p1, @p2, ... in order (through
// sp_executesql), and a statement may name a parameter more than once.
// Statements whose shape depends on a count (rows of a batch, tags of a
// filter) are built per call by the functions below; SQL Server caches one
// plan per distinct text. Status values are literals, never parameters, so
// that the optimizer can match the filtered indexes (WHERE status =
// 'PENDING' and so on).

// SQL Server accepts at most 2,100 parameters per statement (and 1,000
// rows per VALUES list). The batch sizes below stay under both.
const (
	maxParams      = 2100
	rowsPerInsert  = 90  // 23 parameters a row: 2,070
	tagsPerInsert  = 500 // 2 a row
	keysPerLookup  = 1000
	rowsPerComplet = 200 // 10 a row: 2,000
	idsPerList     = 1000
)

// p names parameter i (1-based).
func p(i int) string { return "@p" + strconv.Itoa(i) }

// plist returns "@pfirst, ..., @p(first+n-1)".
func plist(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p(first + i))
	}
	return b.String()
}

// rowsOf returns n parenthesized rows of cols parameters from @pfirst on:
// "(@p1, @p2), (@p3, @p4)".
func rowsOf(first, n, cols int) string {
	var b strings.Builder
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + plist(first+r*cols, cols) + ")")
	}
	return b.String()
}

// pendingTasksSQL reads the distinct tasks of the PENDING jobs, for a
// claim of any task: a scan of the filtered claim index (SQL Server has no
// loose index scan), which only tools and tests pay; the engine always
// lists its tasks.
const pendingTasksSQL = `SELECT DISTINCT task_name FROM scheduler_job WHERE status = 'PENDING'`

// permitsSQL takes, in the order given, the transaction-owned application
// lock of each of n resources (@p2.., lock names), waiting at most @p1
// milliseconds each (a lock not granted raises error 51000, which the
// claim retries), and then counts each resource's RUNNING holders (@p(n+2)..,
// the resources' names): the count runs after the locks are granted, so it
// sees every claim that held them before.
func permitsSQL(n int) string {
	var b strings.Builder
	b.WriteString("DECLARE @rc INT;\n")
	for i := range n {
		fmt.Fprintf(&b, `EXEC @rc = sp_getapplock @Resource = %s, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = @p1;
IF @rc < 0 THROW %d, 'ratchet: resource permit lock not granted', 1;
`, p(2+i), errPermitLock)
	}
	fmt.Fprintf(&b, `SELECT r.n, (SELECT COUNT(*) FROM scheduler_job j WHERE j.resource_name = r.n AND j.status = 'RUNNING')
	FROM (VALUES %s) AS r(n)`, rowsOf(2+n, n, 1))
	return b.String()
}

// claimSQL moves n jobs (@p3..) to RUNNING for node @p1 at @p2 and returns
// two result sets: the ids it updated (OUTPUT), then those jobs with their
// tags, read back under the claim's locks.
func claimSQL(n int) string {
	ids := plist(3, n)
	return `UPDATE scheduler_job SET status = 'RUNNING', owner_node = @p1, claim_seq = claim_seq + 1, claimed_time = @p2
	OUTPUT inserted.job_id
	WHERE job_id IN (` + ids + `) AND status = 'PENDING';
SELECT ` + jobColumns + `
	FROM scheduler_job j WHERE j.job_id IN (` + ids + `) AND j.status = 'RUNNING'`
}

// numCompleteArgs is the number of parameters of one completion row: its
// index in the batch, id, claim sequence, new status, finish time, retry
// time, attempts, last error, result, result type.
const numCompleteArgs = 10

// completeSQL applies n fenced completions given as a VALUES list joined
// with the jobs by primary key, and returns (OUTPUT) the batch indexes of
// those that applied. Each row's status decides which columns change: a
// success sets the finish time, result and result type; a retry (PENDING)
// sets the due time, attempts and error and clears the owner; a failure
// sets the finish time, attempts and error. The claim sequence does not
// change.
func completeSQL(n int) string {
	return `UPDATE j SET
		j.status = v.st,
		j.finished_time = CASE WHEN v.st = 'PENDING' THEN j.finished_time ELSE v.fin END,
		j.scheduled_time = CASE WHEN v.st = 'PENDING' THEN v.retry_at ELSE j.scheduled_time END,
		j.attempts = CASE WHEN v.st = 'SUCCEEDED' THEN j.attempts ELSE v.att END,
		j.last_error = CASE WHEN v.st = 'SUCCEEDED' THEN j.last_error ELSE v.err END,
		j.job_result = CASE WHEN v.st = 'SUCCEEDED' THEN v.res ELSE j.job_result END,
		j.result_type = CASE WHEN v.st = 'SUCCEEDED' THEN v.rtype ELSE j.result_type END,
		j.owner_node = CASE WHEN v.st = 'PENDING' THEN NULL ELSE j.owner_node END
	OUTPUT v.i
	FROM scheduler_job AS j WITH (ROWLOCK)
	JOIN (VALUES ` + rowsOf(1, n, numCompleteArgs) + `)
		AS v (i, id, seq, st, fin, retry_at, att, err, res, rtype) ON j.job_id = v.id
	WHERE j.claim_seq = v.seq AND j.status = 'RUNNING'`
}

// syntax is how SQL Server writes the portable statements: @pN
// parameters, typed NULLs for VARBINARY and DATETIME2, update locks as
// table hints.
var syntax = sqlcore.Syntax{
	Mark:       p,
	JobColumns: jobColumns,
	ID:         func(id uuid.UUID) any { return dbID(id) },
	Time:       func(t time.Time) any { return nullDBTime(t) },
	Name:       func(s string) any { return name(s) },
	NullName:   func(s string) any { return nullName(s) },
	Long:       nullText,
	Blob:       func(b []byte) any { return nullBytes(b) },
	LockHint:   " WITH (UPDLOCK, ROWLOCK)",
	Top:        true,
	// An INSERT hands back its identity with OUTPUT INSERTED.
	NewKey: sqlcore.KeyOutput,
	// The claim's scans skip the rows other claimers hold (READPAST), and
	// the rows they read stay update-locked until the claim commits.
	ScanHint: " WITH (UPDLOCK, READPAST, ROWLOCK)",
	// The read of existing idempotency keys locks the keys' ranges of the
	// unique index, so that a concurrent insert of the same new key waits
	// for this transaction instead of failing.
	KeyHint: " WITH (UPDLOCK, HOLDLOCK)",
	MaxArgs: maxParams,
	// The fence of a state write holds a shared lock on the job's row to
	// the end of the transaction.
	FenceHint: " WITH (REPEATABLEREAD, ROWLOCK)",
	Now:       "SELECT SYSUTCDATETIME()",
	// A unique key's row is made by a MERGE that holds its range lock, so
	// that two inserts of a new key take turns instead of one failing.
	UniqueReserve: "MERGE {unique} WITH (HOLDLOCK) AS u USING (SELECT ? AS unique_key) AS s ON u.unique_key = s.unique_key " +
		"WHEN NOT MATCHED THEN INSERT (unique_key) VALUES (s.unique_key);",
}

// database is SQL Server's side of the contract with the shared store
// methods (sqlcore.Database): lockTimeout bounds the wait for a resource's
// permit.
type database struct{ lockTimeout time.Duration }

func (database) Name() string                  { return "the SQL Server store" }
func (database) Syntax() sqlcore.Syntax        { return syntax }
func (database) InsertSizes() (rows, tags int) { return rowsPerInsert, tagsPerInsert }
func (database) IDText(b []byte) string        { return idText(b) }
func (database) PropertiesByPrefixSQL(id uuid.UUID, prefix string) (string, []any) {
	return propertiesByPrefixSQL, []any{dbID(id), name(prefix)}
}

// The claim's Take reads rows with the dialect's decoder.
func init() { dialect.Take = take }

// dialect is SQL Server's part of the shared store methods, with the
// default lock timeout: the portable statements in its syntax, and its own
// where SQL Server's SQL differs. A store compiles its own with its lock
// timeout (dialectWith).
var dialect = sqlcore.Compile[[]byte](database{DefaultLockTimeout}, ownStatements)

// ownStatements are SQL Server's statements and facts besides its
// database's methods.
var ownStatements = sqlcore.Dialect[[]byte]{
	InsertRetryable:  insertRetryable,
	WriteCompletions: writeCompletions,
	PendingTasksSQL:  pendingTasksSQL,
	OldestDueSQL:     sqlcore.OldestDuePlain(&syntax),
	TimeOf:           sqlcore.WallClock,
	MaxIDs:           keysPerLookup,
	IsDuplicate:      func(err error) bool { return isDuplicateKey(err, "") },
}

// dialectWith is the dialect of a store whose permit locks wait at most
// lock.
func dialectWith(lock time.Duration) sqlcore.Dialect[[]byte] {
	d := sqlcore.Compile[[]byte](database{lock}, ownStatements)
	d.Take = take
	return d
}

// Property statements; @p1 is the job id, @p2 the key.
const (
	// propertiesByPrefixSQL: @p2 the prefix, compared as bytes (no
	// wildcards, no case folding); the job's row even without properties.
	propertiesByPrefixSQL = `SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id
		AND SUBSTRING(p.prop_key, 1, DATALENGTH(@p2)) = @p2
	WHERE j.job_id = @p1`
)
