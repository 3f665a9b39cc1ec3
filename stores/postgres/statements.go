package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// statements holds the store's SQL, with table names qualified by its
// schema. pgx prepares each statement once per connection and caches it
// (QueryExecModeCacheStatement, the default), so the hot statements are
// parsed and planned once.
type statements struct {
	claims                                        *sync.Map // claimKey -> the claim statements, built on first use
	replace                                       *strings.Replacer
	lockResources, countHolders                   string
	claimIDs, pendingTasks                        string
	jobTable                                      string // the job table, qualified (JobStats)
	complete, completeSucceeded, completeRecorded string
	insert                                        [16]string // indexed by insKeyed | insTags | insNotify | insProps
	existingKeys, notify                          string
	initState, updateState                        string
	propertiesByPrefix                            string
	archive                                       string
	uniqueReserve, uniqueStatus, uniqueHold       string // unique.go
	uniqueHolder, uniqueReplace                   string
}

// insertColumns are the columns an insert writes, in the order of the
// arrays of insertArrays and of the COPY rows (a COPY leaves out those at
// their defaults for the whole batch, see copyDefaults).
var insertColumns = []string{"job_id", "task_name", "payload", "status", "priority", "scheduled_time",
	"created_time", "attempts", "max_retries", "backoff_kind", "backoff_param_us", "claim_seq",
	"crash_count", "owner_node", "claimed_time", "finished_time", "last_error", "job_result",
	"result_type", "idempotency_key", "params", "resource_name", "resource_limit", "trace_context"}

// statusColumn is the place of status in insertColumns: sqlcore's
// AppendRow writes every column of insertColumns but status.
var statusColumn = slices.Index(insertColumns, "status")

// Flags of the insert statement variants.
const (
	insKeyed  = 1 << iota // ON CONFLICT on the idempotency key
	insTags               // also inserts tags
	insNotify             // publishes a wakeup
	insProps              // also inserts properties
)

// runningFence is 'RUNNING' in a form the planner cannot see through, used
// by the fenced batch updates: with the literal, the planner may prove that
// the partial index idx_scheduler_job_owner (WHERE status = 'RUNNING')
// applies and, when the statistics count few RUNNING rows (right after a
// bulk insert, say), join the batch against every RUNNING row, rescanning
// the batch's arrays for each (quadratic in generic plans). With an
// uncorrelated scalar subquery (an InitPlan), the only usable index is the
// primary key: one index lookup per entry of the batch, whatever the
// statistics say.
const runningFence = `(SELECT 'RUNNING'::text)`

// pendingFence is 'PENDING' hidden from the planner likewise, for the
// UPDATEs of claims (claimIDs), which must find their rows through the
// primary key or their tuple ids, not through the claim index.
const pendingFence = `(SELECT 'PENDING'::text)`

// buildStatements returns the statements of a store on schema.
func buildStatements(schema string) statements {
	r := strings.NewReplacer(
		"{job}", qualify(schema, "scheduler_job"),
		"{tag}", qualify(schema, "scheduler_job_tag"),
		"{node}", qualify(schema, "scheduler_node"),
		"{lease}", qualify(schema, "scheduler_lease"),
		"{state}", qualify(schema, "scheduler_job_state"),
		"{prop}", qualify(schema, "scheduler_job_property"),
		"{archive}", qualify(schema, "scheduler_job_archive"),
		"{archive_tag}", qualify(schema, "scheduler_job_archive_tag"),
		"{archive_prop}", qualify(schema, "scheduler_job_archive_property"),
		"{archive_state}", qualify(schema, "scheduler_job_archive_state"),
		"{dep}", qualify(schema, "scheduler_job_dep"),
		"{signal}", qualify(schema, "scheduler_job_signal"),
		"{batch}", qualify(schema, "scheduler_batch"),
		"{pause}", qualify(schema, "scheduler_task_pause"),
		"{attempt}", qualify(schema, "scheduler_job_attempt"),
		"{unique}", qualify(schema, "scheduler_job_unique"),
		"{rate}", qualify(schema, "scheduler_rate_start"),
	)
	s := statements{claims: &sync.Map{}, replace: r}
	s.archive = r.Replace(archiveSQL)
	s.pendingTasks = r.Replace(sqlcore.PendingTasksSQL("{job}", ""))
	s.jobTable = qualify(schema, "scheduler_job")
	// The holders of each resource are counted through the partial index
	// idx_scheduler_job_resource (the literal 'RUNNING' lets the planner
	// prove that it applies).
	s.lockResources = `SELECT pg_advisory_xact_lock(k) FROM (
			SELECT DISTINCT hashtextextended($1 || '/' || r, 0) AS k FROM unnest($2::text[]) AS r
			ORDER BY k) AS keys`
	s.countHolders = r.Replace(`SELECT r, (SELECT count(*) FROM {job} j WHERE j.resource_name = r AND j.status = 'RUNNING')
		FROM unnest($1::text[]) AS r`)
	s.claimIDs = r.Replace(`UPDATE {job} j
		SET status = 'RUNNING', owner_node = $2, claim_seq = j.claim_seq + 1, claimed_time = $3
		WHERE j.job_id = ANY($1::uuid[]) AND j.status = ` + pendingFence + `
		RETURNING ` + coreColumns)
	// The completions of a batch: a join of the batch's arrays with the
	// table by primary key, each row checked by its claim sequence and
	// status (the fence). It returns each applied completion's position in
	// the arrays, from 1. CompleteJobs runs both statements on custom plans
	// (customPlan), so that the join is planned for the batch's size and
	// the table's. Joined by tuple id (the version the claim wrote, handed
	// back through the Completion), each entry rescanned a TID scan that
	// asked the kernel for the table's size (an lseek per completed job,
	// nine in ten of PostgreSQL's system calls in a burn-down); by
	// primary key, worked jobs/s were 4 to 12 % higher. Looked up by
	// position in the arrays instead (job_id = ANY($1), then
	// array_position), each row searched the id array: quadratic.
	s.complete = r.Replace(completeUpdate("", "") + `
		RETURNING u.k`)
	// complete for a batch that holds runs to record (spi.Completion.Record:
	// every outcome but a success), in the same statement: the applied
	// rows' records are inserted from the update's output (a
	// data-modifying CTE, so the records commit with the completions), and
	// a record of a claim past spi.AttemptsKept deletes the job's records
	// it outdates. $10 outcomes (NULL: no record), $11 nodes, $12 starts.
	kept := strconv.Itoa(spi.AttemptsKept)
	s.completeRecorded = r.Replace(`WITH done AS (
		` + completeUpdate(", $10::text[], $11::text[], $12::timestamptz[]", ", aout, anode, astart") + `
		RETURNING u.k, u.id, u.seq, u.fin, u.err, u.aout, u.anode, u.astart
	), rec AS (
		INSERT INTO {attempt} (job_id, claim_seq, node_id, started_time, finished_time, outcome, error_text)
		SELECT id, seq, anode, astart, fin, aout, err FROM done WHERE aout IS NOT NULL
		RETURNING job_id, claim_seq
	), pruned AS (
		DELETE FROM {attempt} a USING rec
		WHERE rec.claim_seq > ` + kept + ` AND a.job_id = rec.job_id AND a.claim_seq <= rec.claim_seq - ` + kept + `
	)
	SELECT k FROM done`)
	// complete for a batch of successes alone, the usual batch: four
	// arrays fewer to send and no outcome to test per row. $1 ids, $2
	// claim sequences, $3 finish times, $4 results, $5 result types.
	s.completeSucceeded = r.Replace(`UPDATE {job} j SET
			status = 'SUCCEEDED', finished_time = u.fin, job_result = u.res, result_type = u.rtype
		FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[], $4::bytea[], $5::text[]) WITH ORDINALITY
			AS u (id, seq, fin, res, rtype, k)
		WHERE j.job_id = u.id AND j.claim_seq = u.seq AND j.status = ` + runningFence + `
		RETURNING u.k`)
	for v := range s.insert {
		s.insert[v] = r.Replace(insertSQL(v))
	}
	s.existingKeys = r.Replace(`SELECT idempotency_key, job_id FROM {job} WHERE idempotency_key = ANY($1::text[])`)
	s.notify = `SELECT pg_notify($1, $2)`
	s.uniqueStatements(r)
	// The state writes lock the job row FOR SHARE: the fence is read from
	// the latest committed version of the row (READ COMMITTED re-reads a
	// row it waited for), and no claim, completion, release or recovery
	// can change the job until the write commits. $4 (init) or $5
	// (update) is the claim sequence of a fenced write, NULL for an
	// unfenced one. The result: whether the job exists, whether the fence
	// holds, whether the write applied.
	s.initState = r.Replace(`WITH jr AS (SELECT status, claim_seq FROM {job} WHERE job_id = $1 FOR SHARE),
		fenced AS (SELECT 1 FROM jr WHERE $4::bigint IS NULL OR (jr.status = 'RUNNING' AND jr.claim_seq = $4)),
		ins AS (
			INSERT INTO {state} (job_id, namespace, state_json, version)
			SELECT $1, $2, $3, 0 FROM fenced
			ON CONFLICT (job_id, namespace) DO NOTHING
			RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM jr), EXISTS (SELECT 1 FROM fenced), EXISTS (SELECT 1 FROM ins)`)
	s.updateState = r.Replace(`WITH jr AS (SELECT status, claim_seq FROM {job} WHERE job_id = $1 FOR SHARE),
		fenced AS (SELECT 1 FROM jr WHERE $5::bigint IS NULL OR (jr.status = 'RUNNING' AND jr.claim_seq = $5)),
		upd AS (
			UPDATE {state} s SET state_json = $3, version = s.version + 1
			WHERE s.job_id = $1 AND s.namespace = $2 AND s.version = $4 AND EXISTS (SELECT 1 FROM fenced)
			RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM jr), EXISTS (SELECT 1 FROM fenced), EXISTS (SELECT 1 FROM upd)`)
	// starts_with compares bytes (the text is never a pattern), and the
	// job's properties are found through the primary key.
	s.propertiesByPrefix = r.Replace(`SELECT p.prop_key, p.prop_value FROM {job} j
		LEFT JOIN {prop} p ON p.job_id = j.job_id AND starts_with(p.prop_key, $2)
		WHERE j.job_id = $1`)
	return s
}

// database is PostgreSQL's side of the contract with the shared store
// methods (sqlcore.Database), in one schema.
type database struct {
	st     statements
	schema string
}

func (database) Name() string { return "the PostgreSQL store" }

func (d database) Syntax() sqlcore.Syntax {
	return sqlcore.Syntax{
		Mark:       func(i int) string { return "$" + strconv.Itoa(i) },
		Table:      func(name string) string { return qualify(d.schema, name) },
		JobColumns: d.st.replace.Replace(coreColumns),
		ID:         func(id uuid.UUID) any { return pgUUID(id) },
		Limit:      " LIMIT ?",
		OnConflict: true,
		// clock_timestamp, not now(): the transaction's start may be
		// older than the rate limit's lock it waited for.
		Now: "SELECT clock_timestamp()",
		// The recovery and the releases lock their rows against claims
		// and completions, not against inserts of rows referring to them.
		LockOn:  " FOR NO KEY UPDATE",
		Running: runningFence,
	}
}

// InsertSizes bounds the core's multi-row inserts (a recurring fire, a
// batch's chunk; InsertJobs has its own statements): 500 rows of 22
// parameters, 2,000 tags of two, far below the protocol's 65,535.
func (database) InsertSizes() (rows, tags int) { return 500, 2000 }

func (database) ParseID(id pgtype.UUID) (uuid.UUID, error) {
	if !id.Valid {
		return uuid.Nil, sqlcore.Corrupt("(unknown id)", "NULL job_id")
	}
	return id.Bytes, nil
}

func (database) IDText(id pgtype.UUID) string      { return uuid.UUID(id.Bytes).String() }
func (database) Tags(col string) ([]string, error) { return sqlcore.JSONTags(col) }

// Holders takes a transaction-scoped advisory lock per resource and
// counts each one's RUNNING jobs.
func (d database) Holders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
	if _, err := tx.ExecContext(ctx, d.st.lockResources, d.schema, resources); err != nil {
		return nil, fmt.Errorf("lock resources: %w", err)
	}
	rows, err := tx.QueryContext(ctx, d.st.countHolders, resources)
	if err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	return sqlcore.ReadCounts(rows)
}

func (d database) PropertiesByPrefixSQL(id uuid.UUID, prefix string) (string, []any) {
	return d.st.propertiesByPrefix, []any{pgUUID(id), prefix}
}

// dialect returns PostgreSQL's part of the shared store methods, which
// run through database/sql on the store's pool (the one-statement claim,
// completions, inserts and state writes use pgx directly): the portable
// statements in its syntax, and its own where they differ. wake publishes
// a wakeup; claims the notice that claims were taken away.
func (st statements) dialect(schema string, wake func(context.Context, int32), claims func(context.Context)) sqlcore.Dialect[pgtype.UUID] {
	arg := func(q string, args ...any) (string, []any) { return q, args }
	ids := func(ids []uuid.UUID) []pgtype.UUID { return sqlcore.Conv(ids, pgUUID) }
	return sqlcore.Compile[pgtype.UUID](database{st, schema}, sqlcore.Dialect[pgtype.UUID]{
		PendingTasksSQL: st.pendingTasks,
		JobCountsSQL: func(ctx context.Context, db sqlcore.Querier) (string, error) {
			return jobCountsSQL(ctx, db, st.jobTable, statsPages)
		},
		CandidatesSQL: func(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
			tf := compileTags(tags)
			return st.claim(claimKey{candidates: true, shape: tf.shape, tasks: len(tasks)}), tf.args(tasks, now, int64(limit))
		},
		ClaimSQL: func(node string, now time.Time, in []uuid.UUID) (string, []any) {
			return arg(st.claimIDs, ids(in), nullText(node), now)
		},
		ClaimReturns:  true,
		Wake:          func(ctx context.Context, prio int) { wake(ctx, int32(prio)) },
		ClaimsChanged: claims,
	})
}

// claimKey selects a claim statement: the one-statement claim or the
// permit claim's candidates, for a tag filter shape and a number of tasks.
type claimKey struct {
	candidates   bool
	shape, tasks int
}

// claim returns the statement of k, building it on first use. A node
// claims with one task list, so it uses one or two of them.
func (st statements) claim(k claimKey) string {
	if q, ok := st.claims.Load(k); ok {
		return q.(string)
	}
	q := claimSQL(k.shape, k.tasks)
	if k.candidates {
		q = claimCandidatesSQL(k.shape, k.tasks)
	}
	q = st.replace.Replace(q)
	st.claims.Store(k, q)
	return q
}

// Shapes of a tag filter: which of its lists are not empty. The claim has
// one statement per shape, so that each is prepared once and its plan
// cached, and a filter costs nothing when it is empty.
const (
	tagAll       = 1 << iota // every tag of All
	tagAny                   // at least one tag of Any
	tagNone                  // no tag of None
	numTagShapes = 1 << 3
)

// claimLevels returns the CTEs c4..c0 and cand of the claims: for each
// priority level and each of the tasks given as text parameters $first ..
// $first+tasks-1, the first $2 due ($1) PENDING jobs of that task in
// (scheduled_time, job_id) order that the node may run, locked with SKIP
// LOCKED: one range scan of the task-led idx_scheduler_job_claim per task
// and level (a LATERAL subquery per row of a VALUES list), so jobs of tasks
// the claim does not list are never read. Inside that scan, jobs whose
// resource is full (as many RUNNING holders as their limit, counted through
// idx_scheduler_job_resource) and jobs failing the tag filter of shape
// (and every job of a paused task: a probe of scheduler_task_pause by the
// task's name, evaluated once per scan before it reads an index entry)
// (EXISTS / NOT EXISTS / a COUNT on the tag table's primary key, the lists
// passed as text arrays from $first+tasks on, in the order All, Any, None)
// are passed over, so they never block the jobs behind them.
//
// Why a VALUES list of parameters and not unnest of one array: the planner
// estimates ten elements for an array parameter, so the generic plan of
// an unnest looks ten times as costly as the custom plans and PostgreSQL
// plans every execution afresh (half a millisecond per claim); a VALUES
// list has its exact length in both, and the generic plan is kept.
//
// cols are the columns each candidate carries (of the job aliased x).
func claimLevels(shape, first, tasks int, cols string) string {
	values := make([]string, tasks)
	for i := range values {
		values[i] = fmt.Sprintf("($%d::text)", first+i)
	}
	list := strings.Join(values, ", ")
	cond := tagCondition(shape, first+tasks)
	var b strings.Builder
	b.WriteString("WITH ")
	for p := spi.NumPriorities - 1; p >= 0; p-- {
		fmt.Fprintf(&b, `c%d AS (
			SELECT y.* FROM (VALUES %s) AS t (name) CROSS JOIN LATERAL (%s
				LIMIT $2
				FOR NO KEY UPDATE OF x SKIP LOCKED) y),
		`, p, list, levelScan(cols, "t.name", p, cond))
	}
	b.WriteString("cand AS (")
	for p := spi.NumPriorities - 1; p >= 0; p-- {
		if p != spi.NumPriorities-1 {
			b.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&b, "SELECT * FROM c%d", p)
	}
	b.WriteString(")")
	return b.String()
}

// levelScan is the range scan of the claim index for the task given as
// the SQL expression task at priority level p: the due ($1) PENDING jobs
// in (scheduled_time, job_id) order that the node may run, passing over
// those that cond (tagCondition) refuses, those of a full resource and
// every job of a paused task.
func levelScan(cols, task string, p int, cond string) string {
	return fmt.Sprintf(`
				SELECT %s FROM {job} x
				WHERE x.status = 'PENDING' AND x.task_name = %s AND x.priority = %d AND x.scheduled_time <= $1
					AND NOT EXISTS (SELECT 1 FROM {pause} p WHERE p.task_name = %s)
					AND (x.resource_name IS NULL OR (SELECT count(*) FROM {job} r
						WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)%s
				ORDER BY x.scheduled_time, x.job_id`, cols, task, p, task, cond)
}

// tagCondition is the tag filter of shape on the job aliased x, its lists
// the text arrays from parameter $n on, in the order All, Any, None.
func tagCondition(shape, n int) string {
	var cond strings.Builder
	if shape&tagAll != 0 {
		fmt.Fprintf(&cond, `
				AND (SELECT count(*) FROM {tag} t WHERE t.job_id = x.job_id AND t.tag = ANY($%d::text[]))
					= cardinality($%d::text[])`, n, n)
		n++
	}
	// OFFSET 0 is an optimization fence: it keeps each [NOT] EXISTS a
	// correlated probe of the tag table's primary key, a filter of the
	// claim index scan evaluated per candidate. Without it the planner may
	// pull it up into a semi or anti join driven from the tag index, or
	// hash it: either reads the tag rows of every job ever given those tags
	// (finished jobs keep theirs), whatever the backlog.
	if shape&tagAny != 0 {
		fmt.Fprintf(&cond, `
				AND EXISTS (SELECT 1 FROM {tag} t WHERE t.job_id = x.job_id AND t.tag = ANY($%d::text[]) OFFSET 0)`, n)
		n++
	}
	if shape&tagNone != 0 {
		fmt.Fprintf(&cond, `
				AND NOT EXISTS (SELECT 1 FROM {tag} t WHERE t.job_id = x.job_id AND t.tag = ANY($%d::text[]) OFFSET 0)`, n)
	}
	return cond.String()
}

// claimSQL is the claim of tag filter shape in one statement: the
// candidates of claimLevels; the best $2 of those by effective priority,
// due time and id; and one UPDATE of those rows, found by their tuple ids
// (ctid = ANY of the picked rows' ctids: a TID scan, one page access per
// row and no index descent; the plan does not depend on how many rows the
// statistics expect), that returns them. The tuple ids are those of the
// versions the candidate scan locked: no one else can update a locked row
// before this statement ends, so each still names its row (and a row that
// moved under a concurrent update is found by the lock's recheck at its
// new version, whose ctid the scan returns). Found through the primary key
// with job_id = ANY, the 500 rows of a full claim took 1.3 ms of its 6.
// The UPDATE's status condition stays, as a fence.
//
// When a picked job names a resource, the statement claims nothing and
// returns a single row of NULLs instead: permits need the claim of
// claimCandidatesSQL, in a transaction that serializes the claimers of the
// resource (see Store.claimPermits). For a job without a resource, the
// resource condition of the candidate scans is a NULL test: the claim of
// jobs without resources stays one statement, takes no lock besides its
// rows' and counts nothing.
//
// Parameters: $1 now, $2 limit, $3 boost interval in nanoseconds (0 or less
// disables aging), $4 node (NULL for none), from $5 the tasks, one each,
// then the tag lists. Each row is the job's columns (coreColumns).
//
// The effective priority is priority + floor(wait / boost) with wait = now
// − scheduled_time in nanoseconds, when wait > 0 and boost > 0, computed
// exactly in numeric (EXTRACT returns numeric since PostgreSQL 14, and div
// truncates), as spi.EffectivePriority computes it.
func claimSQL(shape, tasks int) string {
	var b strings.Builder
	const cols = "x.ctid AS tid, x.job_id, x.priority, x.scheduled_time, x.resource_name"
	b.WriteString(claimLevels(shape, 5, tasks, cols))
	ranked := `
			SELECT tid, resource_name FROM cand
			ORDER BY priority + CASE WHEN $3::bigint > 0 AND scheduled_time < $1
					THEN div(EXTRACT(EPOCH FROM ($1 - scheduled_time)) * 1000000000, $3::bigint)
					ELSE 0 END DESC,
				scheduled_time, job_id
			LIMIT $2`
	if tasks < 2 || tasks > maxStrictTasks {
		b.WriteString(`,
		picked AS (` + ranked + `),`)
	} else {
		b.WriteString(",\n\t\t" + strictCandidates(shape, tasks, cols) + `,
		picked AS (
			SELECT * FROM (` + ranked + `) r WHERE NOT (SELECT strict FROM oldest)
			UNION ALL
			SELECT tid, resource_name FROM strictly),`)
	}
	b.WriteString(`
		gate AS (SELECT EXISTS (SELECT 1 FROM picked WHERE resource_name IS NOT NULL) AS permits),
		claimed AS (
			UPDATE {job} j
			SET status = 'RUNNING', owner_node = $4, claim_seq = j.claim_seq + 1, claimed_time = $1
			WHERE j.ctid = ANY(ARRAY(SELECT tid FROM picked WHERE NOT (SELECT permits FROM gate)))
				AND j.status = ` + pendingFence + `
			RETURNING `)
	b.WriteString(coreColumns)
	b.WriteString(`)
		SELECT * FROM claimed
		UNION ALL
		SELECT ` + strings.Repeat("NULL, ", sqlcore.NumJobColumns-1) + `NULL FROM gate WHERE permits`)
	return b.String()
}

// maxStrictTasks is the most tasks whose claim takes the strict order when
// it holds (see strictCandidates): its statement has a scan per task and
// level.
const maxStrictTasks = 32

// strictDepth is how many times the claim's limit the strict order reads
// before it locks the best: the candidates that remain once the rows
// locked by a concurrent claim are passed over. The claims of one task
// list take turns (strictLock), so only the claims of other task lists
// (a node with other tasks, a claim of one task) hold some of them, and
// such a claim takes fewer than its limit. Reading twice the limit, the
// mixed burn-down of ten tasks at five levels worked 6 to 21 % fewer
// jobs/s (8 alternating pairs, median ratio once / twice 1.07).
const strictDepth = "1"

// strictCandidates returns the CTEs oldest, strict and strictly of a claim
// of several tasks (parameters as claimSQL's). While no job the claim may
// take has waited a boost interval ($3 nanoseconds; none when $3 is not
// positive), no job ages past its level, and the claim order is the
// strict one: priority descending, then (scheduled_time, job_id). oldest
// finds the oldest due job of the claim's tasks and levels (one probe of
// the claim index per task and level, filters aside: an older job of a
// paused task only costs the strict order) and says whether the order is
// strict. Then strictly reads the levels in that order, each the merge of
// its tasks' ordered scans (a Merge Append: a row past what it needs from
// each), unlocked, and stops at $2 * strictDepth rows: a lower level is
// read only when the upper ones run short. It locks the best $2 of those
// that no concurrent claim holds (SKIP LOCKED, by tuple id, in the strict
// order, a lock per row it returns). The locked scans of claimLevels read
// and lock $2 jobs of every task and level instead (a locked scan hands
// its rows on unordered, so no merge can stop it early): with ten tasks
// at five levels, a claim of 500 read 5,000 rows. The other order's CTEs
// run only when the order is not strict: picked reads them behind a
// one-time filter.
func strictCandidates(shape, tasks int, cols string) string {
	first := 5
	cond := tagCondition(shape, first+tasks)
	var probes, levels []string
	for p := spi.NumPriorities - 1; p >= 0; p-- {
		var scans []string
		for i := range tasks {
			task := fmt.Sprintf("$%d::text", first+i)
			probes = append(probes, fmt.Sprintf(`(SELECT x.scheduled_time FROM {job} x
				WHERE x.status = 'PENDING' AND x.task_name = %s AND x.priority = %d AND x.scheduled_time <= $1
				ORDER BY x.scheduled_time, x.job_id LIMIT 1)`, task, p))
			scans = append(scans, fmt.Sprintf("SELECT * FROM (%s) b%d_%d", levelScan(cols, task, p, cond), p, i))
		}
		levels = append(levels, fmt.Sprintf(`SELECT * FROM (SELECT * FROM (%s) m
				ORDER BY scheduled_time, job_id
				LIMIT $2 * %s) l%d`, strings.Join(scans, "\n\t\t\t\tUNION ALL "), strictDepth, p))
	}
	return `oldest AS (
			SELECT $3::bigint <= 0 OR o.at IS NULL
				OR o.at > $1 - ($3::bigint / 1000) * interval '1 microsecond' AS strict
			FROM (SELECT least(` + strings.Join(probes, ",\n\t\t\t\t") + `) AS at OFFSET 0) o),
		strictly AS (
			SELECT j.ctid AS tid, j.resource_name FROM {job} j
			WHERE j.ctid = ANY(ARRAY(
				SELECT tid FROM (` + strings.Join(levels, "\n\t\t\tUNION ALL ") + `) s
				WHERE (SELECT strict FROM oldest)
				LIMIT $2 * ` + strictDepth + `))
				AND j.status = 'PENDING'
			ORDER BY j.priority DESC, j.scheduled_time, j.job_id
			LIMIT $2
			FOR NO KEY UPDATE OF j SKIP LOCKED)`
}

// claimCandidatesSQL returns, locked, the candidates of claimLevels for
// tag filter shape, unranked: the claim with permits ranks and admits them
// in Go. Parameters: $1 now, $2 limit, from $3 the tasks, one each, then
// the tag lists.
func claimCandidatesSQL(shape, tasks int) string {
	return claimLevels(shape, 3, tasks, "x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit") + `
		SELECT job_id, priority, scheduled_time, resource_name, resource_limit FROM cand`
}

// insertSQL returns the variant v (insKeyed | insTags | insNotify |
// insProps) of the multi-row insert: one statement that inserts the jobs
// given as arrays ($1..$23, in the order of insertColumns without status),
// their tags (two arrays next: job ids and tags), their properties (three
// arrays next: job ids, keys, values) and publishes a wakeup on the channel
// given after them with the payload "PRIORITY" + the suffix given last (""
// or "|SOURCE"), PRIORITY being the highest priority inserted, and returns
// the ids of the inserted jobs (plus a NULL row when it notified). A keyed
// variant skips jobs whose idempotency key exists, and their tags and
// properties.
func insertSQL(v int) string {
	var b strings.Builder
	b.WriteString(`WITH ins AS (
		INSERT INTO {job} (` + strings.Join(insertColumns, ", ") + `)
		SELECT u.id, u.task, u.payload, 'PENDING', u.prio, u.due, u.created, u.attempts, u.max_retries,
			u.backoff, u.backoff_us, u.seq, u.crash, u.owner, u.claimed, u.finished, u.err, u.result,
			u.result_type, u.idem, u.params, u.resource, u.resource_limit, u.trace
		FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::integer[], $5::timestamptz[],
			$6::timestamptz[], $7::integer[], $8::integer[], $9::text[], $10::bigint[], $11::bigint[],
			$12::integer[], $13::text[], $14::timestamptz[], $15::timestamptz[], $16::text[],
			$17::bytea[], $18::text[], $19::text[], $20::text[], $21::text[], $22::bigint[], $23::bytea[])
			AS u(id, task, payload, prio, due, created, attempts, max_retries, backoff, backoff_us, seq,
				crash, owner, claimed, finished, err, result, result_type, idem, params, resource, resource_limit, trace)`)
	if v&insKeyed != 0 {
		b.WriteString(`
		ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`)
	}
	b.WriteString(`
		RETURNING job_id, priority)`)
	next := 24
	arg := func(typ string) string {
		next++
		return "$" + strconv.Itoa(next-1) + "::" + typ
	}
	onlyInserted := func(col string) {
		if v&insKeyed != 0 {
			b.WriteString(`
		WHERE ` + col + ` IN (SELECT job_id FROM ins)`)
		}
		b.WriteString(`)`)
	}
	if v&insTags != 0 {
		b.WriteString(`,
	tg AS (
		INSERT INTO {tag} (job_id, tag)
		SELECT t.id, t.tag FROM unnest(` + arg("uuid[]") + `, ` + arg("text[]") + `) AS t(id, tag)`)
		onlyInserted("t.id")
	}
	if v&insProps != 0 {
		b.WriteString(`,
	pr AS (
		INSERT INTO {prop} (job_id, prop_key, prop_value)
		SELECT p.id, p.k, p.v FROM unnest(` + arg("uuid[]") + `, ` + arg("text[]") + `, ` + arg("text[]") + `) AS p(id, k, v)`)
		onlyInserted("p.id")
	}
	if v&insNotify != 0 {
		ch, suffix := "$"+strconv.Itoa(next), "$"+strconv.Itoa(next+1)
		b.WriteString(`,
	nt AS (SELECT pg_notify(` + ch + `, MAX(priority)::text || ` + suffix + `::text) FROM ins HAVING COUNT(*) > 0)
	SELECT job_id FROM ins UNION ALL SELECT NULL FROM nt`)
	} else {
		b.WriteString(`
	SELECT job_id FROM ins`)
	}
	return b.String()
}

// statsPages is the size of the job table, in pages, up to which JobStats
// counts its jobs, and the pages it samples of a larger table: about
// 25,000 jobs (an insert fills half a page, migration 13: some 24 jobs).
// Either read takes some 40 ms here (1,024 pages, cached).
const statsPages = 1024

// jobCountsSQL returns the read of the counts of the jobs of table by
// status, task and priority: a GROUP BY while the table holds at most
// exactPages pages; else a SYSTEM sample of about exactPages of its pages,
// each count scaled by pages/exactPages (estimated 1). A count of every row
// of a table of 10,000,000 jobs takes seconds; the sample reads the same
// number of pages at any size and sees the table as it is now (not as
// autoanalyze last saw it). The size is the relation's size on disk, which
// PostgreSQL keeps current, not pg_class.reltuples, which only VACUUM and
// ANALYZE refresh. The sample's percentage is a literal, so that the
// planner knows how few rows it reads (with a parameter it assumes a
// tenth of the table, and compiles the plan with JIT, which costs more than
// the read); its seed is fixed (REPEATABLE), so that successive scrapes
// read the same pages, which stay in the buffer cache, as long as the
// table's size does not change much.
func jobCountsSQL(ctx context.Context, db sqlcore.Querier, table string, exactPages int) (string, error) {
	var pages int64
	lit := "'" + strings.ReplaceAll(table, "'", "''") + "'"
	if err := db.QueryRowContext(ctx, `SELECT pg_relation_size(`+lit+`::regclass) / current_setting('block_size')::bigint`).Scan(&pages); err != nil {
		return "", fmt.Errorf("read the job table's size: %w", err)
	}
	if pages <= int64(exactPages) {
		return `SELECT status, task_name, priority, count(*), 0 FROM ` + table + ` GROUP BY status, task_name, priority`, nil
	}
	pct := strconv.FormatFloat(100*float64(exactPages)/float64(pages), 'f', 6, 64)
	scale := strconv.FormatFloat(float64(pages)/float64(exactPages), 'f', 6, 64)
	return `SELECT status, task_name, priority, round(count(*) * ` + scale + `)::bigint, 1
		FROM ` + table + ` TABLESAMPLE SYSTEM (` + pct + `) REPEATABLE (1)
		GROUP BY status, task_name, priority`, nil
}

// completeUpdate is the UPDATE of complete (and of completeRecorded, which
// adds the arrays moreArrays, named moreNames, after the nine of every
// outcome), before its RETURNING: each completion's writes by outcome,
// joined with the table by primary key and fenced by claim sequence and
// status.
func completeUpdate(moreArrays, moreNames string) string {
	return `UPDATE {job} j SET
			(status, scheduled_time, attempts, last_error, owner_node, finished_time, job_result, result_type) = (
				u.st,
				CASE WHEN u.st = 'PENDING' THEN u.retry_at ELSE j.scheduled_time END,
				CASE WHEN u.st = 'SUCCEEDED' THEN j.attempts ELSE u.attempts END,
				CASE WHEN u.st = 'SUCCEEDED' THEN j.last_error ELSE u.err END,
				CASE WHEN u.st = 'PENDING' THEN NULL ELSE j.owner_node END,
				CASE WHEN u.st = 'PENDING' THEN j.finished_time ELSE u.fin END,
				CASE WHEN u.st = 'SUCCEEDED' THEN u.res ELSE j.job_result END,
				CASE WHEN u.st = 'SUCCEEDED' THEN u.rtype ELSE j.result_type END)
		FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[],
				$6::integer[], $7::text[], $8::bytea[], $9::text[]` + moreArrays + `) WITH ORDINALITY
			AS u (id, seq, st, fin, retry_at, attempts, err, res, rtype` + moreNames + `, k)
		WHERE j.job_id = u.id AND j.claim_seq = u.seq AND j.status = ` + runningFence
}
