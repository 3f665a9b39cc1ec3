package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// InsertJobs is spi.Store's InsertJobs in one statement (an INSERT ...
// SELECT FROM unnest of one array per column, with the tags and the wakeup
// in the same statement), or, from [CopyThreshold] jobs without an
// idempotency key, one transaction that writes them with COPY. Either way
// a wakeup carrying the highest inserted priority, and o's Source, is
// published on [Store.WakeupChannel] when the write commits.
func (s *Store) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	p, err := planInsert(jobs, o)
	switch {
	case err != nil:
		return nil, fail("insert jobs", err)
	case len(jobs) == 0:
		return []spi.InsertResult{}, nil
	case !p.useCopy() && !sqlcore.FlowBatch(jobs) && !sqlcore.SignalBatch(jobs) && !p.unique && !p.sequence:
		res, err := s.insert(ctx, s.pool, p)
		if err != nil {
			return nil, fail("insert jobs", err)
		}
		return res, nil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	res, err := s.insert(ctx, tx, p)
	if err == nil {
		err = s.link(ctx, tx, jobs, res)
	}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fail("insert jobs", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fail("insert jobs", err)
	}
	return res, nil
}

// InsertJobsTx is InsertJobs inside txAny, a transaction that the
// application began (on [Store.Pool] or any pool of the same database): the
// jobs exist, and the wakeup is delivered, only if that transaction commits.
// txAny must be a pgx.Tx. It implements [spi.TxInserter].
func (s *Store) InsertJobsTx(ctx context.Context, txAny any, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	tx, ok := txAny.(pgx.Tx)
	if !ok {
		return nil, fail("insert jobs", fmt.Errorf("transaction of type %T, the PostgreSQL store needs a pgx.Tx", txAny))
	}
	if tx == nil {
		return nil, fail("insert jobs", errors.New("nil transaction"))
	}
	p, err := planInsert(jobs, o)
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	if len(jobs) == 0 {
		return []spi.InsertResult{}, nil
	}
	res, err := s.insert(ctx, tx, p)
	if err == nil {
		err = s.link(ctx, tx, jobs, res)
	}
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	return res, nil
}

// link writes the workflow columns and dependencies of a batch just
// inserted through q (see sqlcore.Dialect.LinkStatements), links its
// sequenced jobs (sqlcore.Dialect.LinkSequences), then makes the
// jobs it wrote (res: not duplicates) that await a signal WAITING, with
// their waits (see sqlcore.Dialect.AwaitStatements).
func (s *Store) link(ctx context.Context, q dbtx, jobs []*spi.Job, res []spi.InsertResult) error {
	for _, st := range s.dialect.LinkStatements(jobs) {
		if _, err := q.Exec(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("link the jobs of a workflow: %w", err)
		}
	}
	if err := s.dialect.LinkSequences(ctx, pgRowTx{q}, written(jobs, res)); err != nil {
		return err
	}
	if !sqlcore.SignalBatch(jobs) {
		return nil
	}
	var fresh []*spi.Job
	for _, j := range written(jobs, res) {
		if j.Signal != nil {
			fresh = append(fresh, j)
		}
	}
	for _, st := range s.dialect.AwaitStatements(fresh) {
		if _, err := q.Exec(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("write the signal waits: %w", err)
		}
	}
	return nil
}

// CopyThreshold is the number of jobs without an idempotency key from which
// one InsertJobs call writes them with COPY instead of a multi-row INSERT.
// Below it, a whole insert is one statement and one round trip.
const CopyThreshold = 256

// insertPlan sorts a batch: the first job of each idempotency key, the jobs
// without a key, and the later jobs of a key, which are duplicates of the
// first.
type insertPlan struct {
	jobs     []*spi.Job
	dupOf    []int // index of the first job with the same key, or -1
	keyed    []int // indexes of the first job of each key
	keyless  []int // indexes of the jobs without a key
	params   []pgtype.Text
	suffix   string // of the wakeup's payload: see sourceSuffix
	unique   bool   // a job carries a unique key (unique.go)
	sequence bool   // a job carries a sequence key (link)
}

// planInsert validates a batch (spi.ValidateJobs) and plans its insert
// with o.
func planInsert(jobs []*spi.Job, o spi.InsertOptions) (*insertPlan, error) {
	if err := spi.ValidateJobs(jobs); err != nil {
		return nil, err
	}
	p := &insertPlan{jobs: jobs, dupOf: make([]int, len(jobs)), params: make([]pgtype.Text, len(jobs)), suffix: sourceSuffix(o.Source)}
	var first map[string]int
	var pe sqlcore.ParamsEncoder
	for i, j := range jobs {
		p.dupOf[i] = -1
		if j.Params != nil {
			b, err := pe.Encode(j.Params)
			if err != nil {
				return nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
			}
			p.params[i] = pgtype.Text{String: b, Valid: true}
		}
		p.unique = p.unique || j.Unique != nil
		p.sequence = p.sequence || j.Sequence != nil
		k := j.IdempotencyKey
		if k == "" {
			p.keyless = append(p.keyless, i)
			continue
		}
		if first == nil {
			first = make(map[string]int)
		}
		if f, ok := first[k]; ok {
			p.dupOf[i] = f
			continue
		}
		first[k] = i
		p.keyed = append(p.keyed, i)
	}
	return p, nil
}

// useCopy reports whether the jobs without a key go through COPY, which
// needs a transaction.
func (p *insertPlan) useCopy() bool { return len(p.keyless) >= CopyThreshold }

// insert writes the plan's jobs through q (the pool, or a transaction when
// the plan uses COPY) and returns one result per job.
func (s *Store) insert(ctx context.Context, q dbtx, p *insertPlan) ([]spi.InsertResult, error) {
	res := make([]spi.InsertResult, len(p.jobs))
	var inserted map[uuid.UUID]bool // ids of keyed jobs the statement wrote
	var dups map[int]uuid.UUID
	var err error
	if p.unique {
		if dups, err = s.admitUnique(ctx, q, p.jobs); err != nil {
			return nil, err
		}
	}
	if len(dups) > 0 { // a unique job carries no idempotency key: its index is in keyless
		p.keyless = slices.DeleteFunc(p.keyless, func(i int) bool { _, dup := dups[i]; return dup })
	}
	switch {
	case len(p.keyed)+len(p.keyless) == 0:
		// Every job is a duplicate of a unique key's holder.
	case p.useCopy():
		if len(p.keyed) > 0 {
			if inserted, err = s.insertRows(ctx, q, p, p.keyed, true, false, ""); err != nil {
				return nil, err
			}
		}
		if err := s.copyRows(ctx, q, p, p.keyless); err != nil {
			return nil, err
		}
		maxPrio := spi.PriorityLowest
		for _, i := range p.keyless {
			maxPrio = max(maxPrio, p.jobs[i].Priority)
		}
		for _, i := range p.keyed {
			if inserted[p.jobs[i].ID] {
				maxPrio = max(maxPrio, p.jobs[i].Priority)
			}
		}
		if _, err := q.Exec(ctx, s.sql.notify, s.channel, strconv.Itoa(int(maxPrio))+p.suffix); err != nil {
			return nil, fmt.Errorf("publish wakeup: %w", err)
		}
	default:
		all := append(append(make([]int, 0, len(p.keyed)+len(p.keyless)), p.keyed...), p.keyless...)
		if inserted, err = s.insertRows(ctx, q, p, all, len(p.keyed) > 0, true, p.suffix); err != nil {
			return nil, err
		}
	}
	if p.unique {
		if err := s.holdUnique(ctx, q, p.jobs, p.keyless); err != nil {
			return nil, err
		}
	}
	var conflicts []string
	for _, i := range p.keyed {
		if !inserted[p.jobs[i].ID] {
			conflicts = append(conflicts, p.jobs[i].IdempotencyKey)
		}
	}
	existing, err := s.lookupKeys(ctx, q, conflicts)
	if err != nil {
		return nil, err
	}
	for i, j := range p.jobs {
		switch {
		case p.dupOf[i] >= 0:
			// Filled below, once the first job of the key is resolved.
		case dups[i] != uuid.Nil:
			res[i] = spi.InsertResult{ID: dups[i], Duplicate: true}
		case j.IdempotencyKey != "" && !inserted[j.ID]:
			res[i] = spi.InsertResult{ID: existing[j.IdempotencyKey], Duplicate: true}
		default:
			res[i] = spi.InsertResult{ID: j.ID}
		}
	}
	for i, f := range p.dupOf {
		if f >= 0 {
			res[i] = spi.InsertResult{ID: res[f].ID, Duplicate: true}
		}
	}
	return res, nil
}

// insertRows inserts the jobs at idx (and their tags) with one INSERT ...
// SELECT FROM unnest statement, skipping existing idempotency keys when
// keyed, publishing a wakeup in the statement when notify (suffix is the
// payload's source part, see sourceSuffix). It returns the ids of the keyed
// jobs it inserted (nil when not keyed).
func (s *Store) insertRows(ctx context.Context, q dbtx, p *insertPlan, idx []int, keyed, notify bool, suffix string) (map[uuid.UUID]bool, error) {
	n := len(idx)
	a := insertArrays{
		ids: make([]pgtype.UUID, 0, n), tasks: make([]string, 0, n), payloads: make([][]byte, 0, n),
		prios: make([]int32, 0, n), due: make([]time.Time, 0, n), created: make([]pgtype.Timestamptz, 0, n),
		attempts: make([]int32, 0, n), maxRetries: make([]int32, 0, n), backoff: make([]string, 0, n),
		backoffUS: make([]int64, 0, n), seq: make([]int64, 0, n), crash: make([]int32, 0, n),
		owner: make([]pgtype.Text, 0, n), claimed: make([]pgtype.Timestamptz, 0, n),
		finished: make([]pgtype.Timestamptz, 0, n), lastErr: make([]pgtype.Text, 0, n),
		result: make([][]byte, 0, n), resultType: make([]pgtype.Text, 0, n),
		idem: make([]pgtype.Text, 0, n), params: make([]pgtype.Text, 0, n),
		resource: make([]pgtype.Text, 0, n), resourceLimit: make([]int64, 0, n),
		trace: make([][]byte, 0, n),
	}
	var tagIDs, propIDs []pgtype.UUID
	var tags, propKeys, propValues []string
	for _, i := range idx {
		j := p.jobs[i]
		a.add(j, p.params[i])
		for _, t := range sqlcore.UniqueTags(j.Tags) {
			tagIDs = append(tagIDs, pgUUID(j.ID))
			tags = append(tags, t)
		}
		for _, k := range sqlcore.SortedKeys(j.Properties) {
			propIDs = append(propIDs, pgUUID(j.ID))
			propKeys, propValues = append(propKeys, k), append(propValues, j.Properties[k])
		}
	}
	v := 0
	args := a.args()
	if keyed {
		v |= insKeyed
	}
	if len(tags) > 0 {
		v |= insTags
		args = append(args, tagIDs, tags)
	}
	if len(propIDs) > 0 {
		v |= insProps
		args = append(args, propIDs, propKeys, propValues)
	}
	if notify {
		v |= insNotify
		args = append(args, s.channel, suffix)
	}
	rows, err := q.Query(ctx, s.sql.insert[v], args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var inserted map[uuid.UUID]bool
	if keyed {
		inserted = make(map[uuid.UUID]bool, n)
	}
	var id pgtype.UUID
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if keyed && id.Valid {
			inserted[id.Bytes] = true
		}
	}
	return inserted, rows.Err()
}

// copyRows writes the jobs at idx and their tags with COPY.
func (s *Store) copyRows(ctx context.Context, q dbtx, p *insertPlan, idx []int) error {
	pending := any(string(spi.StatusPending)) // boxed once, not per row
	// A column whose value is its default for every job of the batch is
	// left out, to its default: fewer values to encode and for PostgreSQL
	// to parse per row (a batch of new jobs has about ten such columns).
	// from holds, for each column the COPY writes, where its value is in
	// AppendRow's values (which leave status out), or -1 for status.
	var cols []string
	var from []int
	for c, name := range insertColumns {
		dflt := copyDefaults[name]
		keep := dflt == nil || slices.ContainsFunc(idx, func(i int) bool { return !dflt(p.jobs[i], p.params[i]) })
		switch {
		case !keep:
		case c == statusColumn:
			cols, from = append(cols, name), append(from, -1)
		case c < statusColumn:
			cols, from = append(cols, name), append(from, c)
		default:
			cols, from = append(cols, name), append(from, c-1)
		}
	}
	conn, ok := q.(interface{ Conn() *pgx.Conn })
	if !ok {
		return fmt.Errorf("copy jobs: COPY needs a transaction, not a %T", q)
	}
	var all []any // the values of every column but status, reused row after row
	src := newCopyRowsReader(cols, len(idx), func(k int, row []any) []any {
		all = s.dialect.Syntax.AppendRow(all[:0], p.jobs[idx[k]], p.params[idx[k]].String) // params as planInsert encoded them
		for _, f := range from {
			if f < 0 {
				row = append(row, pending)
			} else {
				row = append(row, all[f])
			}
		}
		return row
	})
	quoted := make([]string, len(cols))
	for c, name := range cols {
		quoted[c] = pgx.Identifier{name}.Sanitize()
	}
	sql := "COPY " + pgx.Identifier{s.schema, "scheduler_job"}.Sanitize() + " (" + strings.Join(quoted, ", ") + ") FROM STDIN WITH (FORMAT binary)"
	if _, err := conn.Conn().PgConn().CopyFrom(ctx, src, sql); err != nil {
		return fmt.Errorf("copy jobs: %w", err)
	}
	var rows, props [][]any
	for _, i := range idx {
		j := p.jobs[i]
		for _, t := range sqlcore.UniqueTags(j.Tags) {
			rows = append(rows, []any{pgUUID(j.ID), t})
		}
		for _, k := range sqlcore.SortedKeys(j.Properties) {
			props = append(props, []any{pgUUID(j.ID), k, j.Properties[k]})
		}
	}
	if len(rows) > 0 {
		if _, err := q.CopyFrom(ctx, pgx.Identifier{s.schema, "scheduler_job_tag"}, []string{"job_id", "tag"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("copy tags: %w", err)
		}
	}
	if len(props) > 0 {
		if _, err := q.CopyFrom(ctx, pgx.Identifier{s.schema, "scheduler_job_property"}, []string{"job_id", "prop_key", "prop_value"}, pgx.CopyFromRows(props)); err != nil {
			return fmt.Errorf("copy properties: %w", err)
		}
	}
	return nil
}

// copyDefaults tells, for the columns of insertColumns that have a default
// in the schema, whether a job's value is that default (as InsertRow
// writes it: "" as NULL, the zero time as NULL); a COPY leaves out a
// column whose value is its default for the whole batch.
var copyDefaults = map[string]func(j *spi.Job, params pgtype.Text) bool{
	"priority":         func(j *spi.Job, _ pgtype.Text) bool { return j.Priority == 2 },
	"created_time":     func(j *spi.Job, _ pgtype.Text) bool { return j.CreatedAt.IsZero() },
	"attempts":         func(j *spi.Job, _ pgtype.Text) bool { return j.Attempts == 0 },
	"max_retries":      func(j *spi.Job, _ pgtype.Text) bool { return j.MaxRetries == 3 },
	"backoff_kind":     func(j *spi.Job, _ pgtype.Text) bool { return j.Backoff == "NONE" },
	"backoff_param_us": func(j *spi.Job, _ pgtype.Text) bool { return j.BackoffParam.Microseconds() == 0 },
	"claim_seq":        func(j *spi.Job, _ pgtype.Text) bool { return j.ClaimSeq == 0 },
	"crash_count":      func(j *spi.Job, _ pgtype.Text) bool { return j.CrashCount == 0 },
	"owner_node":       func(j *spi.Job, _ pgtype.Text) bool { return j.OwnerNode == "" },
	"claimed_time":     func(j *spi.Job, _ pgtype.Text) bool { return j.ClaimedAt.IsZero() },
	"finished_time":    func(j *spi.Job, _ pgtype.Text) bool { return j.FinishedAt.IsZero() },
	"last_error":       func(j *spi.Job, _ pgtype.Text) bool { return j.LastError == "" },
	"job_result":       func(j *spi.Job, _ pgtype.Text) bool { return j.Result == nil },
	"result_type":      func(j *spi.Job, _ pgtype.Text) bool { return j.ResultType == "" },
	"idempotency_key":  func(j *spi.Job, _ pgtype.Text) bool { return j.IdempotencyKey == "" },
	"params":           func(_ *spi.Job, params pgtype.Text) bool { return !params.Valid },
	"resource_name":    func(j *spi.Job, _ pgtype.Text) bool { return j.Resource == "" },
	"resource_limit":   func(j *spi.Job, _ pgtype.Text) bool { return j.ResourceLimit == 0 },
	"trace_context":    func(j *spi.Job, _ pgtype.Text) bool { return len(j.TraceContext) == 0 },
}

// lookupKeys maps idempotency keys that conflicted to the ids of the jobs
// that hold them.
func (s *Store) lookupKeys(ctx context.Context, q dbtx, keys []string) (map[string]uuid.UUID, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, s.sql.existingKeys, keys)
	if err != nil {
		return nil, err
	}
	found := make(map[string]uuid.UUID, len(keys))
	var k string
	var id pgtype.UUID
	_, err = pgx.ForEachRow(rows, []any{&k, &id}, func() error {
		found[k] = id.Bytes
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if _, ok := found[k]; !ok {
			// The job holding the key was deleted after the insert saw it.
			return nil, fmt.Errorf("idempotency key %q conflicted, but no job holds it any more; retry the insert", k)
		}
	}
	return found, nil
}

// insertArrays holds the columns of a multi-row insert, one array each.
type insertArrays struct {
	ids                                      []pgtype.UUID
	tasks, backoff                           []string
	payloads, result                         [][]byte
	prios, attempts, maxRetries, crash       []int32
	due                                      []time.Time
	created, claimed, finished               []pgtype.Timestamptz
	backoffUS, seq, resourceLimit            []int64
	owner, lastErr, resultType, idem, params []pgtype.Text
	resource                                 []pgtype.Text
	trace                                    [][]byte
}

func (a *insertArrays) add(j *spi.Job, params pgtype.Text) {
	a.ids = append(a.ids, pgUUID(j.ID))
	a.tasks = append(a.tasks, j.TaskName)
	a.payloads = append(a.payloads, j.Payload)
	a.prios = append(a.prios, int32(j.Priority))
	a.due = append(a.due, j.ScheduledAt)
	a.created = append(a.created, nullTime(j.CreatedAt))
	a.attempts = append(a.attempts, int32(j.Attempts))
	a.maxRetries = append(a.maxRetries, int32(j.MaxRetries))
	a.backoff = append(a.backoff, string(j.Backoff))
	a.backoffUS = append(a.backoffUS, j.BackoffParam.Microseconds())
	a.seq = append(a.seq, j.ClaimSeq)
	a.crash = append(a.crash, int32(j.CrashCount))
	a.owner = append(a.owner, nullText(j.OwnerNode))
	a.claimed = append(a.claimed, nullTime(j.ClaimedAt))
	a.finished = append(a.finished, nullTime(j.FinishedAt))
	a.lastErr = append(a.lastErr, nullText(j.LastError))
	a.result = append(a.result, j.Result)
	a.resultType = append(a.resultType, nullText(j.ResultType))
	a.idem = append(a.idem, nullText(j.IdempotencyKey))
	a.params = append(a.params, params)
	a.resource = append(a.resource, nullText(j.Resource))
	a.resourceLimit = append(a.resourceLimit, int64(j.ResourceLimit))
	var trace []byte // NULL for none, empty or not
	if len(j.TraceContext) > 0 {
		trace = j.TraceContext
	}
	a.trace = append(a.trace, trace)
}

// args returns the arrays as the statement's parameters $1..$23.
func (a *insertArrays) args() []any {
	return []any{a.ids, a.tasks, a.payloads, a.prios, a.due, a.created, a.attempts, a.maxRetries,
		a.backoff, a.backoffUS, a.seq, a.crash, a.owner, a.claimed, a.finished, a.lastErr,
		a.result, a.resultType, a.idem, a.params, a.resource, a.resourceLimit, a.trace}
}

// pgRowTx adapts a pgx transaction to sqlcore.RowTx.
type pgRowTx struct{ q dbtx }

func (t pgRowTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.q.Exec(ctx, query, args...)
	return err
}

func (t pgRowTx) Scan(ctx context.Context, query string, args []any, dest ...any) error {
	err := t.q.QueryRow(ctx, query, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// written returns the jobs of a batch that its insert wrote (res: not
// duplicates).
func written(jobs []*spi.Job, res []spi.InsertResult) []*spi.Job {
	out := make([]*spi.Job, 0, len(jobs))
	for i, j := range jobs {
		if !res[i].Duplicate {
			out = append(out, j)
		}
	}
	return out
}
