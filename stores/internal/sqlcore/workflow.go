package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Workflows (spi.WorkflowStore), in the portable SQL of every dialect
// (migration 8). A job of a workflow carries workflow_id, dep_count,
// dep_waiting (BLOCKED while above zero) and dep_children; its
// dependencies are rows of {dep}. Whatever finishes a parent (a
// completion, a recovery that fails it, a cancel) calls finish in its own
// transaction: it decrements each waiting child's dep_waiting, releasing
// the child when that was the last, and records the parent's state on
// the dependencies. Two parents of one child finishing at once both
// update the child's row, so the row lock puts them one after the other
// and the decrement of the second sees the first: no write skew, no child
// left BLOCKED.

// blocking are the states of a parent its children still wait for (a
// WAITING parent waits for a signal).
const blocking = "('PENDING', 'RUNNING', 'BLOCKED', 'WAITING')"

// finished is a parent that a write finished, and the state it ended in.
type finished struct {
	id     uuid.UUID
	status spi.Status
}

// OneByOne reports whether completion c takes the path of Core.CompleteJobs
// that writes each completion alone from its spi.Change (a store with its
// own batched completion, such as PostgreSQL's, hands such batches to it):
// it has dependents to release, an outcome only a workflow job has, or it
// is a snooze or a wait. The dialects' batched statements write the
// outcomes of every run (success, retry, failure) and nothing else.
func OneByOne(c spi.Completion) bool {
	return c.HasDependents || c.Outcome == spi.OutcomeSkipped || c.Outcome == spi.OutcomeCancelled ||
		c.Outcome == spi.OutcomeSnoozed || c.Outcome == spi.OutcomeWaiting
}

// Statement is one SQL statement with its arguments, bound as the
// dialect binds them.
type Statement struct {
	SQL  string
	Args []any
}

// FlowBatch reports whether a job of jobs belongs to a workflow or has a
// workflow edge: LinkStatements has something to write for it. A
// workflow of one step has no edge, but its job has a workflow id, which
// the plain insert does not write.
func FlowBatch(jobs []*spi.Job) bool {
	return spi.WorkflowBatch(jobs) || slices.ContainsFunc(jobs, func(j *spi.Job) bool { return j != nil && j.WorkflowID != uuid.Nil })
}

// LinkStatements are the statements that write the workflow columns and
// the dependencies of the new jobs of an insert, once they are written as
// PENDING in the same transaction: a job with dependencies becomes
// BLOCKED. None for a batch without workflow jobs. A store whose insert
// does not run through Core (PostgreSQL's) runs them itself.
func (d Dialect[T]) LinkStatements(jobs []*spi.Job) []Statement {
	s := &d.Syntax
	var out []Statement
	var deps []depRow
	for _, j := range jobs {
		if j.WorkflowID == uuid.Nil && len(j.Dependencies) == 0 && j.Dependents == 0 {
			continue
		}
		set, args := "workflow_id = NULL", []any{}
		if j.WorkflowID != uuid.Nil {
			set, args = "workflow_id = ?", []any{s.id(j.WorkflowID)}
		}
		if len(j.Dependencies) > 0 {
			set += ", status = 'BLOCKED'"
		}
		n := int64(len(j.Dependencies))
		q, a := s.SQL("UPDATE {job} SET "+set+", dep_count = ?, dep_waiting = ?, dep_children = ? WHERE job_id = ?",
			append(args, n, n, int64(j.Dependents), s.id(j.ID))...)
		out = append(out, Statement{q, a})
		for i, dep := range j.Dependencies {
			deps = append(deps, depRow{j.ID, i, dep})
		}
	}
	return append(out, d.depInserts(deps)...)
}

// depRow is a dependency to write: the child's, at its position.
type depRow struct {
	child uuid.UUID
	pos   int
	dep   spi.Dependency
}

// depInserts are the multi-row inserts of deps.
func (d Dialect[T]) depInserts(deps []depRow) []Statement {
	s := &d.Syntax
	var out []Statement
	per := 300
	if s.MaxArgs > 0 {
		per = max(1, min(per, s.MaxArgs/6))
	}
	for start := 0; start < len(deps); start += per {
		chunk := deps[start:min(len(deps), start+per)]
		args := make([]any, 0, 6*len(chunk))
		for _, r := range chunk {
			args = append(args, s.id(r.child), s.id(r.dep.ParentID), int64(r.pos), int64(r.dep.Allow),
				s.nullName(r.dep.Condition), s.blob(r.dep.ConditionArgs))
		}
		q, a := s.SQL("INSERT INTO {dep} (child_id, parent_id, position, allow_mask, cond_name, cond_args) VALUES "+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", len(chunk)), ", "), args...)
		out = append(out, Statement{q, a})
	}
	return out
}

// link runs LinkStatements through q.
func (d Dialect[T]) link(ctx context.Context, q DBTX, jobs []*spi.Job) error {
	for _, st := range d.LinkStatements(jobs) {
		if _, err := q.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("link the jobs of a workflow: %w", err)
		}
	}
	return nil
}

// finish records, in tx, that the parents ended in their states at now:
// each child still waiting for one of them counts one dependency less and
// is released (PENDING, due at the later of its due time and now) when it
// was its last; then the dependencies carry the parents' states. It
// reports whether it changed a child. Finishing a parent twice changes
// nothing the second time (its dependencies already carry a state).
func (d Dialect[T]) finish(ctx context.Context, tx *sql.Tx, parents []finished, now time.Time) (bool, error) {
	changed := false
	for _, p := range parents {
		// A failure leaves the links that hold on it waiting
		// (spi.HoldOnFailure, the highest Allow bit).
		held, heldArgs := "", []any(nil)
		if p.status == spi.StatusFailed {
			held, heldArgs = " AND allow_mask < ?", []any{int64(spi.HoldOnFailure)}
		}
		n, err := d.resolveLinks(ctx, tx, []uuid.UUID{p.id}, p.status, held, heldArgs, now)
		if err != nil {
			return changed, fmt.Errorf("release the dependents of job %s: %w", p.id, err)
		}
		changed = changed || n > 0
	}
	return changed, nil
}

// resolveLinks records status on the unrecorded links from parents that
// match the condition filter (with its arguments), in q: it reads the
// children of those links (through the parents' index), makes each of
// them that is BLOCKED count one dependency less, releases those for which
// it was the last (PENDING, due at the later of their due time and now),
// and records status on those links only, so that a link moved to a
// parent meanwhile (a sequence's handover) stays waiting. A child must
// have one such link at most among parents. It returns how many children
// it released or counted down.
func (d Dialect[T]) resolveLinks(ctx context.Context, q DBTX, parents []uuid.UUID, status spi.Status, filter string, filterArgs []any, now time.Time) (int64, error) {
	s := &d.Syntax
	query, args := s.SQL("SELECT child_id FROM {dep} WHERE parent_id IN (?) AND parent_status IS NULL"+filter, append([]any{s.ids(parents)}, filterArgs...)...)
	kids, err := queryRows(ctx, q, query, args, func(rows *sql.Rows) (uuid.UUID, error) {
		var raw T
		if err := rows.Scan(&raw); err != nil {
			return uuid.Nil, err
		}
		return d.ParseID(raw)
	})
	if err != nil || len(kids) == 0 {
		return 0, err
	}
	var changed int64
	// The links' update names the parents and a chunk of children.
	_, err = InChunks(kids, max(1, d.chunk()-len(parents)), func(ids []uuid.UUID) ([]struct{}, error) {
		// The status and due time read dep_waiting before it changes
		// (MySQL assigns in order, the others all at once).
		query, args := s.SQL(`UPDATE {job} SET status = CASE WHEN dep_waiting <= 1 THEN 'PENDING' ELSE status END,
		scheduled_time = CASE WHEN dep_waiting <= 1 AND scheduled_time < ? THEN ? ELSE scheduled_time END,
		dep_waiting = dep_waiting - 1
	WHERE status = 'BLOCKED' AND job_id IN (?)`, s.time(now), s.time(now), s.ids(ids))
		r, err := q.ExecContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		n, _ := r.RowsAffected()
		changed += n
		query, args = s.SQL("UPDATE {dep} SET parent_status = ? WHERE parent_id IN (?) AND child_id IN (?) AND parent_status IS NULL"+filter,
			append([]any{string(status), s.ids(parents), s.ids(ids)}, filterArgs...)...)
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return nil, fmt.Errorf("record the state %s on the links: %w", status, err)
		}
		return nil, nil
	})
	return changed, err
}

// finishWithDependents is finish for the jobs of ids, all in state st,
// that have dependents (dep_children > 0).
func (c Core[T]) finishWithDependents(ctx context.Context, tx *sql.Tx, ids []uuid.UUID, st spi.Status, now time.Time) (bool, error) {
	s := &c.cfg.D.Syntax
	var parents []finished
	if _, err := InChunks(ids, c.cfg.D.chunk(), func(ids []uuid.UUID) ([]struct{}, error) {
		q, args := s.SQL("SELECT job_id FROM {job} WHERE dep_children > 0 AND job_id IN (?)", s.ids(ids))
		got, err := c.readIDs(ctx, tx, q, args)
		for _, id := range got {
			parents = append(parents, finished{id, st})
		}
		return nil, err
	}); err != nil {
		return false, err
	}
	return c.cfg.D.finish(ctx, tx, parents, now)
}

// revive makes the dependents of parent that its failure cancelled or
// skipped (spi.CancelledByDependency), or that have not run yet, wait for
// it again (BLOCKED, one dependency more), and so on down the workflow:
// parent is about to run again (a DLQ retry).
func (c Core[T]) revive(ctx context.Context, tx *sql.Tx, parent uuid.UUID) error {
	s := &c.cfg.D.Syntax
	frontier := []uuid.UUID{parent}
	for len(frontier) > 0 {
		p := frontier[0]
		frontier = frontier[1:]
		type kid struct {
			id        uuid.UUID
			status    string
			lastError sql.NullString
		}
		q, args := s.SQL(`SELECT d.child_id, c.status, c.last_error FROM {dep} d JOIN {job} c ON c.job_id = d.child_id
	WHERE d.parent_id = ? AND d.parent_status IS NOT NULL ORDER BY d.child_id`, s.id(p))
		kids, err := queryRows(ctx, tx, q, args, func(rows *sql.Rows) (kid, error) {
			var k kid
			var raw T
			if err := rows.Scan(&raw, &k.status, &k.lastError); err != nil {
				return k, err
			}
			id, err := c.cfg.D.ParseID(raw)
			k.id = id
			return k, err
		})
		if err != nil {
			return err
		}
		for _, k := range kids {
			st := spi.Status(k.status)
			done := (st == spi.StatusCancelled || st == spi.StatusSkipped) && spi.CancelledByDependency(k.lastError.String)
			if st != spi.StatusBlocked && st != spi.StatusPending && !done {
				continue
			}
			for _, stmt := range []struct {
				q    string
				args []any
			}{
				{"UPDATE {dep} SET parent_status = NULL WHERE parent_id = ? AND child_id = ?", []any{s.id(p), s.id(k.id)}},
				{"UPDATE {job} SET status = 'BLOCKED', dep_waiting = dep_waiting + 1, finished_time = NULL, last_error = NULL WHERE job_id = ?", []any{s.id(k.id)}},
			} {
				q, args := s.SQL(stmt.q, stmt.args...)
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					return fmt.Errorf("revive job %s: %w", k.id, err)
				}
			}
			if done {
				frontier = append(frontier, k.id)
			}
		}
	}
	return nil
}

// queryRows runs q through tx and reads each row with scan.
func queryRows[R any](ctx context.Context, tx Querier, q string, args []any, scan func(*sql.Rows) (R, error)) ([]R, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []R
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Dependencies returns the dependencies of job id in insert order, with
// the states their parents finished in. It wraps spi.ErrNotFound for an
// unknown (or archived) job. It implements [spi.WorkflowStore].
func (c Core[T]) Dependencies(ctx context.Context, id uuid.UUID) ([]spi.Dependency, error) {
	s := &c.cfg.D.Syntax
	var out []spi.Dependency
	err := c.do("read the dependencies of job "+id.String(), func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			_, err := c.statusIn(ctx, tx, id)
			if err != nil {
				return err
			}
			q, args := s.SQL("SELECT parent_id, allow_mask, cond_name, cond_args, parent_status FROM {dep} WHERE child_id = ? ORDER BY position", s.id(id))
			out, err = queryRows(ctx, tx, q, args, func(rows *sql.Rows) (spi.Dependency, error) {
				var dep spi.Dependency
				var raw T
				var allow int64
				var cond, status sql.NullString
				var condArgs []byte
				if err := rows.Scan(&raw, &allow, &cond, &condArgs, &status); err != nil {
					return dep, err
				}
				pid, err := c.cfg.D.ParseID(raw)
				if err != nil {
					return dep, err
				}
				dep = spi.Dependency{ParentID: pid, Allow: spi.Allow(allow), Condition: cond.String,
					ConditionArgs: condArgs, ParentStatus: spi.Status(status.String)}
				if len(dep.ConditionArgs) == 0 {
					dep.ConditionArgs = nil
				}
				return dep, nil
			})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []spi.Dependency{}
	}
	return out, nil
}

// WorkflowJobs returns a page of the live jobs of workflow id, in id
// order, through the workflow index. It implements [spi.WorkflowStore].
func (c Core[T]) WorkflowJobs(ctx context.Context, id, after uuid.UUID, limit int) ([]*spi.Job, uuid.UUID, error) {
	s := &c.cfg.D.Syntax
	return c.listPage(ctx, "list the jobs of workflow "+id.String(), true, spi.ListParams{After: after, Limit: limit},
		func(p spi.ListParams, limit int) (string, []any) {
			return s.limited("SELECT "+s.JobColumns+"\n\tFROM {job} j WHERE j.workflow_id = ? AND j.job_id > ?\n\tORDER BY j.job_id",
				int64(limit), s.id(id), s.id(p.After))
		})
}

// CancelWorkflow cancels, in one transaction, every job of the workflow
// that has not finished, RUNNING ones with their claim sequence advanced
// and their owner cleared, WAITING ones with their waits resolved
// CANCELLED, and records the cancellations on the dependencies. It implements [spi.WorkflowStore].
func (c Core[T]) CancelWorkflow(ctx context.Context, id uuid.UUID, now time.Time) (int, error) {
	n, aborted := 0, false
	err := c.do("cancel workflow "+id.String(), func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
			n, aborted, err = c.cancelFlow(ctx, tx, id, now)
			return err
		})
	})
	if err == nil {
		c.afterCancel(ctx, cancelled{aborted: aborted})
	}
	return n, err
}

// cancelFlow is CancelWorkflow's writes in tx; it returns how many jobs
// it cancelled, and whether RUNNING ones were among them.
func (c Core[T]) cancelFlow(ctx context.Context, tx *sql.Tx, id uuid.UUID, now time.Time) (n int, aborted bool, err error) {
	s := &c.cfg.D.Syntax
	q, args := s.SQL("SELECT job_id FROM {job} WHERE workflow_id = ? AND status = "+s.running(), s.id(id))
	runs, err := c.readIDs(ctx, tx, q, args)
	if err == nil {
		err = c.recordRuns(ctx, tx, runs, spi.AttemptCancelled, now)
	}
	if err != nil {
		return 0, false, err
	}
	for i, ch := range []spi.Change{spi.Aborted(now), spi.Cancelled(now)} {
		q, args := s.Update(ch, "workflow_id = ?", s.id(id))
		r, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, false, err
		}
		m, err := r.RowsAffected()
		if err != nil {
			return 0, false, err
		}
		n += int(m)
		aborted = aborted || (i == 0 && m > 0)
	}
	if n == 0 {
		return 0, false, nil
	}
	q, args = s.SQL(`UPDATE {dep} SET parent_status = 'CANCELLED'
	WHERE parent_status IS NULL AND parent_id IN (SELECT job_id FROM {job} WHERE workflow_id = ? AND status = 'CANCELLED')`, s.id(id))
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return 0, false, err
	}
	// The jobs it found WAITING: their waits end CANCELLED.
	q, args = s.cancelFlowWaits(id, now)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return 0, false, err
	}
	return n, aborted, nil
}

// RepairWorkflows releases up to limit BLOCKED jobs whose parents have all
// finished, each in a transaction of its own that checks again, under the
// job's lock, that no parent is still running. It implements
// [spi.WorkflowStore].
func (c Core[T]) RepairWorkflows(ctx context.Context, now time.Time, limit int) (int, error) {
	s := &c.cfg.D.Syntax
	n := 0
	err := c.do("repair workflows", func() error {
		var stuck []uuid.UUID
		err := c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
			q, args := s.limited(`SELECT c.job_id FROM {job} c WHERE c.workflow_id IS NOT NULL AND c.status = 'BLOCKED'
	AND NOT EXISTS (SELECT 1 FROM {dep} d JOIN {job} p ON p.job_id = d.parent_id
		WHERE d.child_id = c.job_id AND p.status IN `+blocking+`)
	ORDER BY c.job_id`, int64(max(limit, 1)))
			stuck, err = c.readIDs(ctx, tx, q, args)
			return err
		})
		if err != nil {
			return err
		}
		for _, id := range stuck {
			released := false
			err := c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
				released, err = c.repairOne(ctx, tx, id, now)
				return err
			})
			if err != nil && !errors.Is(err, errRaced) {
				return err
			}
			if released {
				n++
			}
		}
		return nil
	})
	return n, err
}

// repairOne releases the BLOCKED job id at now if none of its parents is
// still running, recording their states (a parent that no longer exists,
// live or archived, as CANCELLED).
func (c Core[T]) repairOne(ctx context.Context, tx *sql.Tx, id uuid.UUID, now time.Time) (bool, error) {
	s := &c.cfg.D.Syntax
	q, args := s.SQL("UPDATE {job} SET dep_waiting = 0 WHERE job_id = ? AND status = 'BLOCKED'", s.id(id))
	if ok, err := applied(tx.ExecContext(ctx, q, args...)); err != nil || !ok {
		return false, err // locked; or no longer BLOCKED
	}
	type edge struct {
		parent       uuid.UUID
		live, arched sql.NullString
	}
	q, args = s.SQL(`SELECT d.parent_id, p.status, a.status FROM {dep} d
		LEFT JOIN {job} p ON p.job_id = d.parent_id
		LEFT JOIN {archive} a ON a.job_id = d.parent_id
	WHERE d.child_id = ? AND d.parent_status IS NULL`, s.id(id))
	edges, err := queryRows(ctx, tx, q, args, func(rows *sql.Rows) (edge, error) {
		var e edge
		var raw T
		if err := rows.Scan(&raw, &e.live, &e.arched); err != nil {
			return e, err
		}
		id, err := c.cfg.D.ParseID(raw)
		e.parent = id
		return e, err
	})
	if err != nil {
		return false, err
	}
	for _, e := range edges {
		st := spi.StatusCancelled
		switch {
		case e.live.Valid:
			st = spi.Status(e.live.String)
		case e.arched.Valid:
			st = spi.Status(e.arched.String)
		}
		if !st.Terminal() {
			return false, errRaced // a parent runs again: roll back
		}
		q, args := s.SQL("UPDATE {dep} SET parent_status = ? WHERE child_id = ? AND parent_id = ?", string(st), s.id(id), s.id(e.parent))
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return false, err
		}
	}
	q, args = s.SQL(`UPDATE {job} SET status = 'PENDING',
		scheduled_time = CASE WHEN scheduled_time < ? THEN ? ELSE scheduled_time END
	WHERE job_id = ? AND status = 'BLOCKED'`, s.time(now), s.time(now), s.id(id))
	return applied(tx.ExecContext(ctx, q, args...))
}

// errRaced rolls back a repair that found a parent running again.
var errRaced = errors.New("a parent is running again")
