package sqlcore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Syntax is how a dialect writes the portable statements: those every SQL
// database runs in the same words (reads and fenced writes by primary key or
// IN list, the moves between states, the node, lease, state and property
// rows, the multi-row inserts). Compile fills the statements a dialect
// leaves nil with them, so that a fix or a new state is written once; a
// dialect writes its own where its SQL differs (upserts, locking reads,
// LIMIT forms, the claim's candidates) or where it has a faster form.
type Syntax struct {
	// Mark is the placeholder of argument i (from 1), the arguments being
	// bound in their order of appearance: "?", "$1", ":1" or "@p1".
	Mark func(i int) string
	// Table qualifies a table name; nil leaves it bare.
	Table func(name string) string
	// JobColumns is the select list of one job from the table aliased j
	// (see JobColumns).
	JobColumns string
	// The encodings of arguments; a nil one binds the Go value. ID is a
	// job id's; Time a time's, the zero time being NULL; Name a name
	// compared byte for byte (node, lease, owner, key, value, namespace,
	// tag), never NULL; NullName a name whose "" is NULL (owner node,
	// idempotency key, resource); Text a text whose "" is NULL (result
	// type); Long a long text whose "" is NULL (last error, params); Blob
	// bytes, nil being NULL.
	ID         func(uuid.UUID) any
	Time       func(time.Time) any
	Name       func(string) any
	NullName   func(string) any
	Text, Long func(string) any
	Blob       func([]byte) any
	// EmptyBlob, when not empty, is the literal that writes an empty,
	// non-nil result where the Blob encoding would bind NULL (Oracle's
	// EMPTY_BLOB()).
	EmptyBlob string
	// LockHint follows the table of a read that locks the rows it returns
	// until the transaction ends (SQL Server's " WITH (UPDLOCK, ROWLOCK)");
	// LockOn ends it (" FOR UPDATE"). SQLite, whose writers take turns,
	// needs neither.
	LockHint, LockOn string
	// Limit ends a query that returns at most ? rows (" LIMIT ?", " FETCH
	// FIRST ? ROWS ONLY"); with Top, the limit is SELECT TOP (?) instead
	// (SQL Server).
	Limit string
	Top   bool
	// StatusHint follows the table of a page of jobs of one status
	// (MySQL's FORCE INDEX). KeyHint and KeyLock make the read of
	// existing idempotency keys see, and hold against other inserts, keys
	// committed after the transaction began (SQL Server's UPDLOCK,
	// HOLDLOCK; MySQL's LOCK IN SHARE MODE).
	StatusHint, KeyHint, KeyLock string
	// Now is the query of the database's clock, as UTC (rate limits);
	// empty means the process's clock (SQLite, whose writers share the
	// host's).
	Now string
	// RateRecord adds a claim's starts to a rate limit's log (resource,
	// time, starts); empty means an INSERT, ON CONFLICT adding to the row
	// where the database has it.
	RateRecord string
	// UniqueReserve is the statement that makes sure the row of the unique
	// key ? exists in {unique}, doing nothing when it does (see
	// admitUnique); empty means INSERT ... ON CONFLICT DO NOTHING.
	UniqueReserve string
	// EmptyNull says that the database stores the empty string as NULL
	// (Oracle): a property value "" is then found as NULL.
	EmptyNull bool
	// IDHint follows the table of the reads of the RUNNING jobs among a
	// list of ids (the fences of completions, releases and recoveries):
	// MySQL's FORCE INDEX (PRIMARY), without which the optimizer may take
	// the status-led index for status = 'RUNNING' and check every RUNNING
	// job against the list (3.4 ms instead of 0.7 for 200 ids among 20,000
	// RUNNING jobs).
	IDHint string
	// FenceHint and FenceOn lock, like LockHint and LockOn, the job row a
	// state write reads its fence from, at least against writers (MySQL's
	// LOCK IN SHARE MODE, SQL Server's REPEATABLEREAD).
	FenceHint, FenceOn string
	// OnConflict says that the database writes upserts as INSERT ... ON
	// CONFLICT (PostgreSQL, SQLite): the node, lease, property and state
	// inserts are then portable too.
	OnConflict bool
	// The claim's candidate scans: ScanHint follows their table (MySQL's
	// FORCE INDEX, SQL Server's skip-locked read), ScanLock ends each ("
	// FOR UPDATE SKIP LOCKED" where the database allows it with a row
	// limit), and ScanParens writes them as (SELECT ...) UNION ALL (SELECT
	// ...) instead of SELECT * FROM (SELECT ...) c UNION ALL ...
	ScanHint, ScanLock string
	ScanParens         bool
	// ScanGuard puts before each candidate scan a probe of its level's
	// newest due entry (MAX(scheduled_time), which the optimizer reads
	// as one backward step of the claim index from now, once per
	// statement), and skips the scan when there is none. InnoDB needs
	// it: a forward scan of an empty level goes on, past the end of its
	// range, through every delete-marked entry that it meets next, and
	// the next level's oldest entries are the ones that earlier claims
	// delete-marked and purge has not removed yet (250 to 1,900 pages per
	// empty level under load, MariaDB 10.11). Read backwards from now,
	// the probe meets the newest entries, which are live. (An EXISTS
	// would not do: MariaDB drops its ORDER BY and reads forwards.)
	ScanGuard bool
	// MaxArgs is the most arguments one statement may bind (0: no
	// limit); a claim splits its tasks over statements to stay under it.
	MaxArgs int
	// Running is the status RUNNING as the reads and writes of jobs by id
	// test it; empty means the literal 'RUNNING'. PostgreSQL hides it from
	// the planner (see its store).
	Running string
	// BatchStatus is the column that the batch statements test a child's
	// status in (through the index of (workflow_id, it)); empty means
	// status. MySQL's is a virtual column, NULL for a job of no workflow.
	BatchStatus string
	// ClaimTask is the column that holds the task of a PENDING job and
	// NULL for the others, which keys the claim index where the database
	// has no partial index (MySQL's virtual column, migration 13): the
	// claim and the reads of the pending tasks test it instead of status
	// = 'PENDING' AND task_name. Empty means those two columns.
	ClaimTask string
	// ResourceStatus is the column that the counts of a resource's
	// RUNNING holders test instead of status, through the index of
	// (resource_name, it); empty means status. MySQL's is a virtual
	// column, NULL for a job that names no resource (migration 13).
	ResourceStatus string
	// BlobEq, when not nil, is the condition that a BLOB column col holds
	// exactly the bytes of the next argument (Oracle's DBMS_LOB.COMPARE);
	// nil means col = ?.
	BlobEq func(col string) string
	// NewKey is how an INSERT hands back the key that the database
	// generated for its row (an identity or auto-increment column: the
	// audit log's seq); the zero value is KeyReturning.
	NewKey KeyReturn
}

// KeyReturn is how a dialect's INSERT hands back the key that the
// database generated for its row.
type KeyReturn int

const (
	// KeyReturning ends the INSERT with RETURNING and reads the key as a
	// row (PostgreSQL, SQLite).
	KeyReturning KeyReturn = iota
	// KeyOutput writes OUTPUT INSERTED.<key> before VALUES and reads the
	// key as a row (SQL Server).
	KeyOutput
	// KeyInto ends the INSERT with RETURNING <key> INTO an output bind
	// (Oracle, whose INSERT returns no rows).
	KeyInto
	// KeyLastInsertID reads the key from the result's LastInsertId
	// (MySQL, which has no INSERT ... RETURNING; MariaDB's is its own).
	KeyLastInsertID
)

// tableNames are the tables of a template's {job}, {tag}, ... without
// their scheduler_ prefix.
var tableNames = map[string]string{"job": "job", "tag": "job_tag", "node": "node",
	"lease": "lease", "state": "job_state", "prop": "job_property", "resource": "resource", "sched": "schedule",
	"archive": "job_archive", "archive_tag": "job_archive_tag", "archive_prop": "job_archive_property", "archive_state": "job_archive_state",
	"log": "job_log", "skip": "schedule_skip", "dep": "job_dep", "signal": "job_signal", "batch": "batch",
	"audit": "audit", "pause": "task_pause", "attempt": "job_attempt", "unique": "job_unique", "rate": "rate_start",
	"sample": "stats_sample"}

// In is an IN list: the one ? that stands for it in a template expands to
// a placeholder per element.
type In []any

// SQL renders template q, whose tables are written {job}, {tag}, {node},
// {lease}, {state}, {prop} and {resource} and whose arguments are ?, with the
// dialect's table names and placeholders.
func (s *Syntax) SQL(q string, args ...any) (string, []any) {
	var b strings.Builder
	b.Grow(len(q) + 8*len(args))
	out := Binds{Mark: s.Mark, Args: make([]any, 0, len(args))}
	next := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '?':
			if l, ok := args[next].(In); ok {
				b.WriteString(out.List(l))
			} else {
				b.WriteString(out.Add(args[next]))
			}
			next++
		case c == '{':
			end := strings.IndexByte(q[i:], '}')
			name := "scheduler_" + tableNames[q[i+1:i+end]]
			if s.Table != nil {
				name = s.Table(name)
			}
			b.WriteString(name)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), out.Args
}

// limited renders the SELECT q with its arguments, returning at most n
// rows.
func (s *Syntax) limited(q string, n int64, args ...any) (string, []any) {
	q, args = s.limit(q, n, args)
	return s.SQL(q, args...)
}

// limit is the template and arguments of limited.
func (s *Syntax) limit(q string, n int64, args []any) (string, []any) {
	if s.Top {
		return "SELECT TOP (?) " + strings.TrimPrefix(q, "SELECT "), append([]any{n}, args...)
	}
	return q + s.Limit, append(args, n)
}

// Completion is the template and arguments of one fenced completion: an
// UPDATE of the job while it is RUNNING with the completion's claim
// sequence, writing what the completion's change writes. The outcome is
// valid (ValidOutcomes).
func (s *Syntax) Completion(c spi.Completion) (string, []any) {
	ch, _ := c.Change()
	return s.UpdateTemplate(ch, "job_id = ? AND claim_seq = ?", s.id(c.JobID), c.ClaimSeq)
}

// scanArgs is the number of arguments of one task's scans in candidates.
func (s *Syntax) scanArgs(tags spi.TagFilter) int {
	guard := 0
	if s.ScanGuard {
		guard = 2
	}
	return spi.NumPriorities * (4 + guard + len(UniqueTags(tags.All)) + len(tags.Any) + len(tags.None))
}

// candidates is the portable CandidatesSQL: for each task and priority
// level from CRITICAL down, the first limit due PENDING jobs of the task
// in (scheduled_time, job_id) order, one range scan of the task-led claim
// index idx_scheduler_job_claim each, so that jobs of tasks the claim does
// not list are never read. Inside each scan, jobs of a full resource (as
// many RUNNING holders as their limit, counted through the holders'
// index) and jobs failing the tag filter are passed over, so they never
// block the jobs behind them. A paused task's scans take nothing (notPaused:
// the pause is read in this statement, so no claim that starts after
// PauseTask returned takes its jobs). The tag tests are counts on the tag table's
// primary key, evaluated for the rows the scan visits only: MySQL and
// MariaDB may turn an EXISTS into a semi-join that first collects every
// job carrying the tags, a read as large as the backlog.
func (s *Syntax) candidates(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
	var cond strings.Builder
	var targs []any
	all := UniqueTags(tags.All)
	for _, l := range []struct {
		tags []string
		test string
	}{{all, " = " + strconv.Itoa(len(all))}, {tags.Any, " > 0"}, {tags.None, " = 0"}} {
		if len(l.tags) > 0 {
			cond.WriteString("\n\t\tAND (SELECT COUNT(*) FROM {tag} t WHERE t.job_id = x.job_id AND t.tag IN (?))" + l.test)
			targs = append(targs, s.names(l.tags))
		}
	}
	open, end := "SELECT * FROM (", ") c"
	if s.ScanParens {
		open, end = "(", ")"
	}
	var q strings.Builder
	args := make([]any, 0, len(tasks)*s.scanArgs(tags))
	for i, task := range tasks {
		for lvl := spi.NumPriorities - 1; lvl >= 0; lvl-- {
			if i > 0 || lvl < spi.NumPriorities-1 {
				q.WriteString("\nUNION ALL\n")
			}
			level := " AND x.priority = " + strconv.Itoa(lvl) + " AND x.scheduled_time <= ?" + notPaused
			largs := []any{s.text(task), s.time(now), s.text(task)}
			if s.ScanGuard {
				level += "\n\t\tAND (SELECT MAX(y.scheduled_time) FROM {job} y" + s.ScanHint + " WHERE " + claimKey(s.ClaimTask).of("y.", "?") +
					" AND y.priority = " + strconv.Itoa(lvl) + " AND y.scheduled_time <= ?) IS NOT NULL"
				largs = append(largs, s.text(task), s.time(now))
			}
			scan, a := s.limit(`SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM {job} x`+s.ScanHint+`
	WHERE `+claimKey(s.ClaimTask).of("x.", "?")+level+`
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM {job} r
			WHERE r.resource_name = x.resource_name AND r.`+s.resourceStatus()+` = 'RUNNING') < x.resource_limit)`+cond.String()+`
	ORDER BY x.scheduled_time, x.job_id`, int64(limit), append(largs, targs...))
			q.WriteString(open + scan + s.ScanLock + end)
			args = append(args, a...)
		}
	}
	return s.SQL(q.String(), args...)
}

// Binds numbers the arguments of a statement that a dialect builds piece
// by piece, in its syntax: each Add binds a value and returns its
// placeholder, so that a value used twice is bound twice.
type Binds struct {
	Mark func(i int) string
	Args []any
}

// Add binds v and returns its placeholder.
func (b *Binds) Add(v any) string {
	b.Args = append(b.Args, v)
	return b.Mark(len(b.Args))
}

// List binds vs and returns their placeholders, separated by commas.
func (b *Binds) List(vs []any) string {
	var s strings.Builder
	for i, v := range vs {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(b.Add(v))
	}
	return s.String()
}

// The encodings, with their defaults.

func (s *Syntax) id(id uuid.UUID) any { return encode(s.ID, id) }

// running is the status RUNNING as the reads and writes by id test it
// (Running, or the literal).
func (s *Syntax) running() string { return cmp.Or(s.Running, "'RUNNING'") }

func (s *Syntax) time(t time.Time) any {
	if s.Time != nil {
		return s.Time(t)
	}
	if t.IsZero() {
		return nil
	}
	return t.UTC().Truncate(time.Microsecond)
}

func (s *Syntax) name(v string) any { return encode(s.Name, v) }

// listed is the FROM and WHERE of a listing: the jobs above p.After that
// pass p's filters. A known status is a literal, so that the plan may use a
// partial or filtered index of that status.
func (s *Syntax) listed(p spi.ListParams) (from, where string, args []any) {
	from, where, args = "{job} j", "j.job_id > ?", []any{s.id(p.After)}
	switch {
	case p.Status.Valid():
		from, where = from+s.StatusHint, where+" AND j.status = '"+string(p.Status)+"'"
	case p.Status != "":
		from, where, args = from+s.StatusHint, where+" AND j.status = ?", append(args, string(p.Status))
	}
	and := func(on bool, cond string, arg any) {
		if on {
			where, args = where+" AND "+cond, append(args, arg)
		}
	}
	and(p.TaskName != "", "j.task_name = ?", p.TaskName)
	and(p.WorkflowID != uuid.Nil, "j.workflow_id = ?", s.id(p.WorkflowID))
	and(!p.CreatedFrom.IsZero(), "j.created_time >= ?", s.time(p.CreatedFrom))
	and(!p.CreatedBefore.IsZero(), "j.created_time < ?", s.time(p.CreatedBefore))
	and(!p.DueBy.IsZero(), "j.scheduled_time <= ?", s.time(p.DueBy))
	and(!p.DueAfter.IsZero(), "j.scheduled_time > ?", s.time(p.DueAfter))
	if p.PropertyKey != "" {
		cond, pargs := s.property(p.PropertyKey, p.PropertyValue)
		where, args = where+" AND EXISTS (SELECT 1 FROM {prop} p WHERE p.job_id = j.job_id AND "+cond+")", append(args, pargs...)
	}
	and(p.Tag != "", "EXISTS (SELECT 1 FROM {tag} t WHERE t.job_id = j.job_id AND t.tag = ?)", s.name(p.Tag))
	if len(p.Priorities) > 0 {
		ps := make(In, len(p.Priorities))
		for i, pr := range p.Priorities {
			ps[i] = int64(pr)
		}
		where, args = where+" AND j.priority IN (?)", append(args, ps)
	}
	// LOWER on both sides: the one case-insensitive match that every
	// dialect writes alike (MySQL's columns compare in binary, Oracle's
	// LIKE is case-sensitive, PostgreSQL's ILIKE is its own).
	and(p.ErrorContains != "", "LOWER(j.last_error) LIKE LOWER(?) ESCAPE '!'", "%"+likeEscape(p.ErrorContains)+"%")
	return from, where, args
}

// likeEscape escapes the wildcards of s for a LIKE with ESCAPE '!'.
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// property is the condition that a property row is key = value.
func (s *Syntax) property(key, value string) (string, []any) {
	if value == "" && s.EmptyNull {
		return "prop_key = ? AND prop_value IS NULL", []any{s.name(key)}
	}
	return "prop_key = ? AND prop_value = ?", []any{s.name(key), s.name(value)}
}

func (s *Syntax) nullName(v string) any {
	if s.NullName != nil {
		return s.NullName(v)
	}
	return nullable(s.Name, v)
}

func (s *Syntax) text(v string) any { return nullable(s.Text, v) }

func (s *Syntax) long(v string) any {
	if s.Long != nil {
		return nullable(s.Long, v)
	}
	return s.text(v)
}

func (s *Syntax) blob(b []byte) any {
	if s.Blob != nil {
		return s.Blob(b)
	}
	if b == nil {
		return nil
	}
	return b
}

func (s *Syntax) ids(ids []uuid.UUID) In { return In(Args(ids, s.id)) }

func (s *Syntax) names(vs []string) In { return In(Args(vs, s.name)) }

// encode is enc(v), or v without an encoding.
func encode[V any](enc func(V) any, v V) any {
	if enc == nil {
		return v
	}
	return enc(v)
}

// nullable is encode with "" as NULL.
func nullable(enc func(string) any, v string) any {
	if v == "" {
		return nil
	}
	return encode(enc, v)
}

// insertColumns are the columns of a job that InsertJobsSQL writes.
const insertColumns = `job_id, task_name, payload, status, priority, scheduled_time, created_time,
	attempts, max_retries, backoff_kind, backoff_param_us, claim_seq, crash_count, owner_node,
	claimed_time, finished_time, last_error, job_result, result_type, idempotency_key, params,
	resource_name, resource_limit, trace_context`

// InsertRow returns the arguments of one row of InsertJobsSQL, in the order
// of its columns without status (a literal), with params the job's params
// as a ParamsEncoder encoded them.
func (s *Syntax) InsertRow(j *spi.Job, params string) []any { return s.AppendRow(nil, j, params) }

// numInsertArgs is the number of arguments of one row of InsertJobsSQL.
const numInsertArgs = 23

// AppendRow appends the arguments of InsertRow to args: a caller that
// writes many rows reuses one slice.
func (s *Syntax) AppendRow(args []any, j *spi.Job, params string) []any {
	return append(args,
		s.id(j.ID), j.TaskName, s.blob(j.Payload), int64(j.Priority), s.time(j.ScheduledAt), s.time(j.CreatedAt),
		int64(j.Attempts), int64(j.MaxRetries), string(j.Backoff), j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), s.nullName(j.OwnerNode), s.time(j.ClaimedAt), s.time(j.FinishedAt),
		s.long(j.LastError), s.blob(j.Result), s.text(j.ResultType), s.nullName(j.IdempotencyKey),
		s.long(params), s.nullName(j.Resource), int64(j.ResourceLimit), s.blob(traceContext(j)),
	)
}

// traceContext is j's trace context as the column stores it: nil (NULL)
// for none, empty or not.
func traceContext(j *spi.Job) []byte {
	if len(j.TraceContext) == 0 {
		return nil
	}
	return j.TraceContext
}

// Compile returns the dialect of db: d, its own statements and facts,
// with every portable statement it leaves nil written in db's syntax. It
// panics when that syntax lacks its Mark or its JobColumns.
func Compile[T any](db Database[T], d Dialect[T]) Dialect[T] {
	s := db.Syntax()
	switch {
	case s.Mark == nil:
		panic(fmt.Sprintf("sqlcore: %s: Syntax().Mark is nil", db.Name()))
	case s.JobColumns == "":
		panic(fmt.Sprintf("sqlcore: %s: Syntax().JobColumns is empty", db.Name()))
	}
	d.Syntax, d.database = s, db
	running := s.running()
	// With Wake, the writes that make jobs PENDING return their priorities.
	returning := ""
	if d.Wake != nil {
		returning = "\n\tRETURNING priority"
	}
	jobs := func(where string, args ...any) (string, []any) {
		return s.SQL("SELECT "+s.JobColumns+"\n\tFROM {job} j WHERE "+where, args...)
	}
	fill(&d.JobsSQL, func(ids []uuid.UUID) (string, []any) { return jobs("j.job_id IN (?)", s.ids(ids)) })
	fill(&d.GetJobSQL, func(id uuid.UUID) (string, []any) { return jobs("j.job_id = ?", s.id(id)) })
	fill(&d.ListJobsSQL, func(p spi.ListParams, limit int) (string, []any) {
		from, where, args := s.listed(p)
		return s.limited("SELECT "+s.JobColumns+"\n\tFROM "+from+" WHERE "+where+"\n\tORDER BY j.job_id", int64(limit), args...)
	})
	fill(&d.CountJobsSQL, func(p spi.ListParams, limit int) (string, []any) {
		from, where, args := s.listed(p)
		q, args := s.limited("SELECT 1 AS one FROM "+from+" WHERE "+where, int64(limit), args...)
		return "SELECT COUNT(*) FROM (" + q + ") c", args
	})
	fill(&d.FindByPropertySQL, func(key, value string, limit int) (string, []any) {
		cond, args := s.property(key, value)
		q := "SELECT job_id FROM {prop} WHERE " + cond + " ORDER BY job_id"
		if limit <= 0 {
			return s.SQL(q, args...)
		}
		return s.limited(q, int64(limit), args...)
	})
	fill(&d.CandidatesSQL, s.candidates)
	// One fenced UPDATE per completion: a database whose writers take
	// turns (SQLite) has no batching to gain. Each distinct statement (one
	// per outcome, at most three) is prepared once per batch: preparing
	// it for every completion was a tenth of a SQLite node's CPU in a
	// burn-down.
	fill(&d.WriteCompletions, func(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
		stmts := make(map[string]*sql.Stmt, 3)
		defer func() {
			for _, st := range stmts {
				_ = st.Close()
			}
		}()
		for _, i := range pos {
			q, args := s.Completion(cs[i])
			q, args = s.SQL(q, args...)
			st, ok := stmts[q]
			if !ok {
				var err error
				if st, err = tx.PrepareContext(ctx, q); err != nil {
					return err
				}
				stmts[q] = st
			}
			var err error
			if out[i], err = applied(st.ExecContext(ctx, args...)); err != nil {
				return err
			}
		}
		return nil
	})
	fill(&d.JobFenceSQL, func(id uuid.UUID) (string, []any) {
		return s.SQL("SELECT status, claim_seq FROM {job}"+s.FenceHint+" WHERE job_id = ?"+s.FenceOn, s.id(id))
	})
	fill(&d.AdoptSQL, func(now time.Time, ids []uuid.UUID) (string, []any) {
		return jobs("j.status = 'RUNNING' AND j.claimed_time = ? AND j.job_id IN (?)", s.time(now), s.ids(ids))
	})
	fill(&d.AdoptClaimsSQL, func(node string, times []time.Time) (string, []any) {
		return jobs("j.status = 'RUNNING' AND j.owner_node = ? AND j.claimed_time IN (?)", s.nullName(node), In(Args(times, s.time)))
	})
	fill(&d.ClaimSQL, func(node string, now time.Time, ids []uuid.UUID) (string, []any) {
		return s.Update(spi.Claimed(node, now), "job_id IN (?)", s.ids(ids))
	})
	fill(&d.FailCorruptSQL, func(now time.Time, msg string, id T, seq int64) (string, []any) {
		if seq < 0 {
			return s.Update(spi.Failed(spi.StatusPending, msg, now), "job_id = ?", id)
		}
		return s.Update(spi.Failed(spi.StatusRunning, msg, now), "job_id = ? AND claim_seq = ?", id, seq)
	})
	fill(&d.ExistingKeysSQL, func(keys []string) (string, []any) {
		return s.SQL("SELECT idempotency_key, job_id FROM {job}"+s.KeyHint+" WHERE idempotency_key IN (?)"+s.KeyLock, s.names(keys))
	})
	// The insert is built directly, not from a template: it is the
	// largest statement, on the path of every submission.
	table, _ := s.SQL("{job}")
	fill(&d.InsertJobsSQL, func(jobs []*spi.Job) (string, []any, error) {
		args := make([]any, 0, len(jobs)*numInsertArgs)
		var q strings.Builder
		q.Grow(len(insertColumns) + 64 + len(jobs)*numInsertArgs*6)
		q.WriteString("INSERT INTO " + table + " (" + insertColumns + ") VALUES ")
		var pe ParamsEncoder
		for i, j := range jobs {
			params, err := pe.Encode(j.Params)
			if err != nil {
				return "", nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
			}
			args = s.AppendRow(args, j, params)
			if i > 0 {
				q.WriteString(",\n\t")
			}
			for k := range numInsertArgs {
				switch k {
				case 0:
					q.WriteByte('(')
				case 3:
					q.WriteString(", 'PENDING', ")
				default:
					q.WriteString(", ")
				}
				q.WriteString(s.Mark(len(args) - numInsertArgs + k + 1))
			}
			q.WriteByte(')')
		}
		return q.String(), args, nil
	})
	fill(&d.InsertTagsSQL, func(tags []JobTag) (string, []any) {
		args := make([]any, 0, 2*len(tags))
		for _, t := range tags {
			args = append(args, s.id(t.ID), s.name(t.Tag))
		}
		return s.SQL("INSERT INTO {tag} (job_id, tag) VALUES "+strings.TrimSuffix(strings.Repeat("(?, ?), ", len(tags)), ", "), args...)
	})
	fill(&d.InsertPropsSQL, func(props []JobProp) (string, []any) {
		args := make([]any, 0, 3*len(props))
		for _, p := range props {
			args = append(args, s.id(p.ID), s.name(p.Key), s.name(p.Value))
		}
		return s.SQL("INSERT INTO {prop} (job_id, prop_key, prop_value) VALUES "+strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(props)), ", "), args...)
	})
	fill(&d.RetryFailedSQL, func(id uuid.UUID, now time.Time) (string, []any) {
		return s.Update(spi.Retried(now), "job_id = ?"+returning, s.id(id))
	})
	fill(&d.CancelSQL, func(id uuid.UUID, now time.Time) (string, []any) {
		return s.Update(spi.Cancelled(now), "job_id = ?"+returning, s.id(id))
	})
	fill(&d.AbortSQL, func(id uuid.UUID, now time.Time) (string, []any) {
		return s.Update(spi.Aborted(now), "job_id = ?"+returning, s.id(id))
	})
	fill(&d.StatusSQL, func(id uuid.UUID) (string, []any) {
		return s.SQL("SELECT status FROM {job} WHERE job_id = ?", s.id(id))
	})
	fill(&d.RunningSQL, func(ids []uuid.UUID, lock bool) (string, []any) {
		if lock {
			return s.SQL("SELECT job_id, claim_seq FROM {job}"+s.IDHint+s.LockHint+"\n\tWHERE status = "+running+" AND job_id IN (?) ORDER BY job_id"+s.LockOn, s.ids(ids))
		}
		return s.SQL("SELECT job_id, claim_seq FROM {job}"+s.IDHint+"\n\tWHERE status = "+running+" AND job_id IN (?)", s.ids(ids))
	})
	fill(&d.ReleaseSQL, func(now time.Time, ids []uuid.UUID) (string, []any) {
		return s.Update(spi.Released(now), "job_id IN (?)"+returning, s.ids(ids))
	})
	fill(&d.DeregisterSQL, func(node string) (string, []any) {
		return s.SQL("DELETE FROM {node} WHERE node_id = ?", s.name(node))
	})
	fill(&d.LiveNodesSQL, func(since time.Time) (string, []any) {
		return s.SQL(LiveNodesSQL("{node}", "?"), s.time(since))
	})
	if d.PendingCountSQL == "" {
		d.PendingCountSQL, _ = s.SQL(PendingTasksCountSQL("{job}", s.ClaimTask))
	}
	if d.PendingTasksSQL == "" {
		d.PendingTasksSQL, _ = s.SQL(PendingTasksSQL("{job}", s.ClaimTask))
	}
	counts, _ := s.SQL(JobCountsSQL("{job}"))
	fill(&d.JobCountsSQL, func(context.Context, Querier) (string, error) { return counts, nil })
	fill(&d.OldestDueSQL, func(now time.Time) (string, []any) { return s.SQL(OldestDueSQL("{job}", s.ClaimTask), s.time(now)) })
	fill(&d.OrphansSQL, func(cutoff time.Time, nodes []string) (string, []any) {
		named, args := "", []any{}
		if len(nodes) > 0 {
			named, args = "j.owner_node IN (?) OR ", []any{s.names(nodes)}
		}
		return s.SQL(`SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
	FROM {job} j`+s.LockHint+`
	WHERE j.status = 'RUNNING' AND (`+named+`NOT EXISTS (SELECT 1 FROM {node} n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= ?))
	ORDER BY j.job_id`+s.LockOn, append(args, s.time(cutoff))...)
	})
	fill(&d.RequeueSQL, func(now time.Time, ids []T) (string, []any) {
		return s.Update(spi.Redelivered(now), "job_id IN (?)", In(Args(ids, nil)))
	})
	fill(&d.BurySQL, func(now time.Time, lastError string, ids []T) (string, []any) {
		return s.Update(spi.Failed(spi.StatusRunning, lastError, now), "job_id IN (?)", In(Args(ids, nil)))
	})
	fill(&d.DeleteNodesSQL, func(cutoff time.Time, nodes []string) (string, []any) {
		if len(nodes) == 0 {
			return s.SQL("DELETE FROM {node} WHERE heartbeat_ts < ?", s.time(cutoff))
		}
		return s.SQL("DELETE FROM {node} WHERE heartbeat_ts < ? OR node_id IN (?)", s.time(cutoff), s.names(nodes))
	})
	if s.OnConflict {
		fill(&d.HeartbeatSQL, func(node string, now time.Time) (string, []any) {
			return s.SQL(`INSERT INTO {node} (node_id, heartbeat_ts) VALUES (?, ?)
	ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts`, s.name(node), s.time(now))
		})
		fill(&d.HeartbeatTasksSQL, func(node, tasks string, now time.Time) (string, []any) {
			return s.SQL(`INSERT INTO {node} (node_id, heartbeat_ts, task_names) VALUES (?, ?, ?)
	ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts, task_names = excluded.task_names`,
				s.name(node), s.time(now), tasks)
		})
		fill(&d.HeartbeatReportSQL, func(node, tasks, report string, now time.Time) (string, []any) {
			return s.SQL(`INSERT INTO {node} (node_id, heartbeat_ts, task_names, node_report) VALUES (?, ?, ?, ?)
	ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts, task_names = excluded.task_names, node_report = excluded.node_report`,
				s.name(node), s.time(now), tasks, report)
		})
		fill(&d.AcquireLeaseSQL, func(lease, owner string, until, now time.Time) (string, []any) {
			return s.SQL(`INSERT INTO {lease} AS l (name, owner, expires_at) VALUES (?, ?, ?)
	ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
	WHERE l.owner = excluded.owner OR l.expires_at <= ?`, s.name(lease), s.name(owner), s.time(until), s.time(now))
		})
	}
	// An existing state or property makes the insert change nothing with ON
	// CONFLICT, and fail with a duplicate key without it (the databases
	// without an upsert undo the failed statement only): either way the
	// caller reads what is in place.
	onConflict := func(key string) string {
		if s.OnConflict {
			return "\n\tON CONFLICT (" + key + ") DO NOTHING"
		}
		return ""
	}
	fill(&d.InitStateSQL, func(id uuid.UUID, ns string, state []byte) (string, []any) {
		return s.SQL("INSERT INTO {state} (job_id, namespace, state_json, version) VALUES (?, ?, ?, 0)"+onConflict("job_id, namespace"),
			s.id(id), s.name(ns), s.blob(state))
	})
	fill(&d.PutPropertySQL, func(id uuid.UUID, key, value string) (string, []any) {
		return s.SQL("INSERT INTO {prop} (job_id, prop_key, prop_value)\n\tSELECT j.job_id, ?, ? FROM {job} j WHERE j.job_id = ?"+onConflict("job_id, prop_key"),
			s.name(key), s.name(value), s.id(id))
	})
	fill(&d.LeaseOwnerSQL, func(lease string) (string, []any) {
		return s.SQL("SELECT owner FROM {lease} WHERE name = ?", s.name(lease))
	})
	fill(&d.ReleaseLeaseSQL, func(lease, owner string) (string, []any) {
		return s.SQL("DELETE FROM {lease} WHERE name = ? AND owner = ?", s.name(lease), s.name(owner))
	})
	fill(&d.GetStateSQL, func(id uuid.UUID, ns string) (string, []any) {
		return s.SQL(`SELECT s.state_json, s.version FROM {job} j
	LEFT JOIN {state} s ON s.job_id = j.job_id AND s.namespace = ?
	WHERE j.job_id = ?`, s.name(ns), s.id(id))
	})
	fill(&d.UpdateStateSQL, func(id uuid.UUID, ns string, state []byte, expected int64) (string, []any) {
		return s.SQL(`UPDATE {state} SET state_json = ?, version = version + 1
	WHERE job_id = ? AND namespace = ? AND version = ?`, s.blob(state), s.id(id), s.name(ns), expected)
	})
	fill(&d.GetPropertySQL, func(id uuid.UUID, key string) (string, []any) {
		return s.SQL(`SELECT p.prop_key, p.prop_value FROM {job} j
	LEFT JOIN {prop} p ON p.job_id = j.job_id AND p.prop_key = ?
	WHERE j.job_id = ?`, s.name(key), s.id(id))
	})
	return d
}

// fill sets the statement *f to portable when the dialect left it nil.
func fill[F any](f *F, portable F) {
	if reflect.ValueOf(f).Elem().IsNil() {
		*f = portable
	}
}
