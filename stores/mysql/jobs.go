package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

const (
	// rowsPerInsert bounds the rows of one multi-row INSERT; the statement
	// budget (a share of max_allowed_packet) bounds its size.
	rowsPerInsert = 500
	// tagsPerInsert bounds the rows of one INSERT of tags.
	tagsPerInsert = 2000
	// keyConflictAttempts bounds how often an insert looks the batch's
	// idempotency keys up again after another transaction committed one of
	// them under it.
	keyConflictAttempts = 4
	// idemKeyIndex names the unique index of idempotency keys, as duplicate
	// key errors quote it.
	idemKeyIndex = "uq_scheduler_job_idempotency_key"
)

// InsertJobs writes new PENDING jobs in one transaction with multi-row
// INSERTs (several when the batch is large: at most 500 rows and a share of
// the server's max_allowed_packet each). A job whose IdempotencyKey already
// exists, in the database or earlier in the same batch, is not written: its
// result carries the existing id and Duplicate. The stored status is
// PENDING whatever Job.Status says. An invalid job (nil, the zero id, a
// priority out of range, a resource with a limit below 1) fails the whole
// batch before anything is written, and so does an id that already exists.
// A deadlock, lock wait timeout or lost connection makes the transaction
// run again (see the package documentation).
func (s *Store) InsertJobs(ctx context.Context, jobs []*spi.Job) ([]spi.InsertResult, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := spi.ValidateJobs(jobs); err != nil {
		return nil, fail("insert jobs", err)
	}
	if len(jobs) == 0 {
		return []spi.InsertResult{}, nil
	}
	p, err := planInsert(jobs)
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	var res []spi.InsertResult
	var written []uuid.UUID
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, written, err = s.insert(ctx, tx, p)
		return err
	}, func(ctx context.Context) (bool, error) {
		if len(written) == 0 {
			return true, nil // nothing was written either way
		}
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+s.sql.t.job+` WHERE job_id = ?`, binID(written[0])).Scan(&n)
		return n == 1, err
	})
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	return res, nil
}

// InsertJobsTx is InsertJobs inside txAny, a transaction that the
// application began (on [Store.DB], or on any connection to the same
// server: the statements name the store's database): the jobs exist only
// if that transaction commits. txAny must be a *sql.Tx. The application
// owns the transaction, so nothing is retried here: a deadlock fails it
// (MySQL has then rolled it back), and the application runs it again.
// It implements [spi.TxInserter].
func (s *Store) InsertJobsTx(ctx context.Context, txAny any, jobs []*spi.Job) ([]spi.InsertResult, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	tx, err := sqlcore.SQLTx(txAny, "the MySQL store")
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	if err := spi.ValidateJobs(jobs); err != nil {
		return nil, fail("insert jobs", err)
	}
	if len(jobs) == 0 {
		return []spi.InsertResult{}, nil
	}
	p, err := planInsert(jobs)
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	res, _, err := s.insert(ctx, tx, p)
	if err != nil {
		return nil, fail("insert jobs", err)
	}
	return res, nil
}

// insertPlan sorts a batch: the first job of each idempotency key and the
// jobs without a key are candidates for writing; the later jobs of a key
// are duplicates of the first.
type insertPlan struct {
	jobs   []*spi.Job
	dupOf  []int // index of the first job with the same key, or -1
	params []any // the params as JSON text, or nil
}

func planInsert(jobs []*spi.Job) (*insertPlan, error) {
	p := &insertPlan{jobs: jobs, dupOf: make([]int, len(jobs)), params: make([]any, len(jobs))}
	first := map[string]int{}
	for i, j := range jobs {
		p.dupOf[i] = -1
		if j.Params != nil {
			b, err := json.Marshal(j.Params)
			if err != nil {
				return nil, fmt.Errorf("job %s: encode params: %w", j.ID, err)
			}
			p.params[i] = string(b)
		}
		if k := j.IdempotencyKey; k != "" {
			if f, ok := first[k]; ok {
				p.dupOf[i] = f
			} else {
				first[k] = i
			}
		}
	}
	return p, nil
}

// insert writes the plan's jobs through q (a transaction) and returns one
// result per job and the ids it wrote. The keys of the batch are looked up
// with a locking read (the latest committed rows, whatever the isolation
// level of q); when another transaction commits one of them before this
// one's INSERT, the INSERT fails on the unique index, and the keys are
// looked up again, keyConflictAttempts times at most.
func (s *Store) insert(ctx context.Context, q querier, p *insertPlan) ([]spi.InsertResult, []uuid.UUID, error) {
	written := make([]bool, len(p.jobs))
	existing := map[string]uuid.UUID{}
	for attempt := 1; ; attempt++ {
		var keys []string
		for i, j := range p.jobs {
			if k := j.IdempotencyKey; k != "" && p.dupOf[i] < 0 && !written[i] {
				if _, ok := existing[k]; !ok {
					keys = append(keys, k)
				}
			}
		}
		if err := s.lookupKeys(ctx, q, keys, existing); err != nil {
			return nil, nil, err
		}
		var fresh []int
		for i, j := range p.jobs {
			if p.dupOf[i] >= 0 || written[i] {
				continue
			}
			if _, dup := existing[j.IdempotencyKey]; dup && j.IdempotencyKey != "" {
				continue
			}
			fresh = append(fresh, i)
		}
		err := s.insertRows(ctx, q, p, fresh, written)
		if err == nil {
			break
		}
		if errCode(err) == errDuplicateKey && strings.Contains(err.Error(), idemKeyIndex) && attempt < keyConflictAttempts {
			continue
		}
		if errCode(err) == errDuplicateKey && strings.Contains(err.Error(), "PRIMARY") {
			return nil, nil, fmt.Errorf("a job id of the batch already exists: %w", err)
		}
		return nil, nil, err
	}
	var ids []uuid.UUID
	var tagArgs []any
	for i, j := range p.jobs {
		if !written[i] {
			continue
		}
		ids = append(ids, j.ID)
		for _, t := range uniqueTags(j.Tags) {
			tagArgs = append(tagArgs, binID(j.ID), []byte(t))
		}
	}
	for start := 0; start < len(tagArgs); start += 2 * tagsPerInsert {
		chunk := tagArgs[start:min(start+2*tagsPerInsert, len(tagArgs))]
		stmt := "INSERT INTO " + s.sql.t.tag + " (job_id, tag) VALUES " + rowMarks(len(chunk)/2, 2)
		if _, err := q.ExecContext(ctx, stmt, chunk...); err != nil {
			return nil, nil, fmt.Errorf("insert tags: %w", err)
		}
	}
	res := make([]spi.InsertResult, len(p.jobs))
	for i, j := range p.jobs {
		switch {
		case p.dupOf[i] >= 0:
			// Filled below, once the first job of the key is resolved.
		case written[i]:
			res[i] = spi.InsertResult{ID: j.ID}
		default:
			res[i] = spi.InsertResult{ID: existing[j.IdempotencyKey], Duplicate: true}
		}
	}
	for i, f := range p.dupOf {
		if f >= 0 {
			res[i] = spi.InsertResult{ID: res[f].ID, Duplicate: true}
		}
	}
	return res, ids, nil
}

// insertRows inserts the jobs at idx with multi-row INSERTs, marking each
// chunk in written once it is in.
func (s *Store) insertRows(ctx context.Context, q querier, p *insertPlan, idx []int, written []bool) error {
	for start := 0; start < len(idx); {
		end, size := start, 0
		for end < len(idx) && end-start < rowsPerInsert {
			n := rowSize(p.jobs[idx[end]])
			if end > start && size+n > s.budget {
				break
			}
			size += n
			end++
		}
		chunk := idx[start:end]
		args := make([]any, 0, len(chunk)*numInsertColumns)
		for _, i := range chunk {
			args = append(args, insertArgs(p.jobs[i], p.params[i])...)
		}
		stmt := "INSERT INTO " + s.sql.t.job + " (" + insertColumns + ") VALUES " + rowMarks(len(chunk), numInsertColumns)
		if _, err := q.ExecContext(ctx, stmt, args...); err != nil {
			return err
		}
		for _, i := range chunk {
			written[i] = true
		}
		start = end
	}
	return nil
}

// rowSize estimates the SQL text of one job's row: binary values may
// double when escaped.
func rowSize(j *spi.Job) int {
	return 400 + 2*(len(j.Payload)+len(j.Result)+len(j.IdempotencyKey)+len(j.Resource)) +
		len(j.TaskName) + len(j.LastError) + len(j.ResultType) + len(j.OwnerNode) + 64*len(j.Params)
}

// lookupKeys adds to found the jobs that hold keys, read with a locking
// read so that rows committed after the transaction's snapshot are seen.
func (s *Store) lookupKeys(ctx context.Context, q querier, keys []string, found map[string]uuid.UUID) error {
	for start := 0; start < len(keys); start += 1000 {
		chunk := keys[start:min(start+1000, len(keys))]
		rows, err := q.QueryContext(ctx, `SELECT idempotency_key, job_id FROM `+s.sql.t.job+`
			WHERE idempotency_key IN (`+marks(len(chunk))+`) LOCK IN SHARE MODE`, binArgs(chunk)...)
		if err != nil {
			return fmt.Errorf("look up idempotency keys: %w", err)
		}
		for rows.Next() {
			var k, raw []byte
			if err := rows.Scan(&k, &raw); err != nil {
				rows.Close()
				return err
			}
			id, err := scanID(raw)
			if err != nil {
				rows.Close()
				return err
			}
			found[string(k)] = id
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func insertArgs(j *spi.Job, params any) []any {
	return []any{
		binID(j.ID), j.TaskName, nullBytes(j.Payload), string(spi.StatusPending), int64(j.Priority),
		dbTime(j.ScheduledAt), nullDBTime(j.CreatedAt),
		int64(j.Attempts), int64(j.MaxRetries), string(j.Backoff), j.BackoffParam.Microseconds(),
		j.ClaimSeq, int64(j.CrashCount), nullBinary(j.OwnerNode),
		nullDBTime(j.ClaimedAt), nullDBTime(j.FinishedAt), nullString(j.LastError),
		nullBytes(j.Result), nullString(j.ResultType), nullBinary(j.IdempotencyKey), params,
		nullBinary(j.Resource), int64(j.ResourceLimit),
	}
}

// rowMarks returns "(?, ?), (?, ?)" for rows rows of cols columns.
func rowMarks(rows, cols int) string {
	row := "(" + marks(cols) + ")"
	var b strings.Builder
	b.Grow(rows * (len(row) + 2))
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}
