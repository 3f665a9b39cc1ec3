package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The lists of workflows and batches (spi.WorkflowLister,
// spi.BatchLister). A workflow has no row of its own: its ids are found
// by a loose scan of the workflow index, one probe (the greatest
// workflow_id below the last one found) per workflow, so that a batch of
// a million children costs one probe, not a walk over its children; the
// batches among them are dropped (ListBatches lists them). The page's
// roots and counts then take two reads through the same index, whatever
// the size of the table.

// ListWorkflows returns a page of workflows, newest first. It implements
// [spi.WorkflowLister].
func (c Core[T]) ListWorkflows(ctx context.Context, p spi.SummaryParams) ([]spi.WorkflowSummary, uuid.UUID, error) {
	limit := p.PageSize()
	var (
		out  []spi.WorkflowSummary
		next uuid.UUID
	)
	err := c.do("list workflows", func() error {
		out, next = nil, uuid.Nil
		ids, err := c.workflowIDs(ctx, p.Before, limit+1)
		if err != nil || len(ids) == 0 {
			return err
		}
		if len(ids) > limit {
			ids = ids[:limit]
			next = ids[limit-1]
		}
		out, err = c.summarize(ctx, ids)
		return err
	})
	if err != nil {
		return nil, uuid.Nil, err
	}
	return out, next, nil
}

// workflowIDs returns up to n ids of workflows below before (the zero id:
// every one) in descending order, the batches left out.
func (c Core[T]) workflowIDs(ctx context.Context, before uuid.UUID, n int) ([]uuid.UUID, error) {
	s := &c.cfg.D.Syntax
	if before == uuid.Nil {
		before = uuid.Max
	}
	var ids []uuid.UUID
	for done := false; !done && len(ids) < n; {
		var cand []uuid.UUID
		for len(cand) < n-len(ids) {
			q, args := s.lastWorkflow(before)
			var raw T
			err := c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&raw)
			if errors.Is(err, sql.ErrNoRows) {
				done = true
				break
			}
			if err != nil {
				return nil, err
			}
			id, err := c.cfg.D.ParseID(raw)
			if err != nil {
				return nil, err
			}
			cand, before = append(cand, id), id
		}
		if len(cand) == 0 {
			break
		}
		q, args := s.batchesAmong(cand)
		batches, err := queryRows(ctx, c.cfg.DB, q, args, func(rows *sql.Rows) (uuid.UUID, error) {
			var raw T
			if err := rows.Scan(&raw); err != nil {
				return uuid.Nil, err
			}
			return c.cfg.D.ParseID(raw)
		})
		if err != nil {
			return nil, err
		}
		for _, id := range cand {
			if !containsID(batches, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

func containsID(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// summarize reads the summaries of workflows ids, in their order; a
// workflow whose jobs went meanwhile is left out.
func (c Core[T]) summarize(ctx context.Context, ids []uuid.UUID) ([]spi.WorkflowSummary, error) {
	s := &c.cfg.D.Syntax
	type head struct {
		flow    uuid.UUID
		task    string
		created time.Time
	}
	q, args := s.workflowRoots(ids)
	heads, err := queryRows(ctx, c.cfg.DB, q, args, func(rows *sql.Rows) (head, error) {
		var (
			raw     T
			h       head
			created any
		)
		if err := rows.Scan(&raw, &h.task, &created); err != nil {
			return h, err
		}
		var err error
		if h.flow, err = c.cfg.D.ParseID(raw); err == nil {
			h.created, err = c.cfg.D.timeOf(created)
		}
		return h, err
	})
	if err != nil || len(heads) == 0 {
		return nil, err
	}
	headOf := make(map[uuid.UUID]head, len(heads))
	for _, h := range heads {
		headOf[h.flow] = h
	}
	counts, err := c.flowCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]spi.WorkflowSummary, 0, len(ids))
	for _, id := range ids {
		h, ok := headOf[id]
		if !ok || len(counts[id]) == 0 {
			continue
		}
		out = append(out, spi.WorkflowSummary{ID: id, RootTask: h.task, CreatedAt: h.created, Counts: counts[id]})
	}
	return out, nil
}

// flowCounts counts the live jobs of each workflow (or batch) of ids by
// status.
func (c Core[T]) flowCounts(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]map[spi.Status]int, error) {
	type count struct {
		flow   uuid.UUID
		status spi.Status
		n      int
	}
	q, args := c.cfg.D.Syntax.flowCounts(ids)
	rows, err := queryRows(ctx, c.cfg.DB, q, args, func(rows *sql.Rows) (count, error) {
		var (
			raw T
			st  string
			n   int64
		)
		if err := rows.Scan(&raw, &st, &n); err != nil {
			return count{}, err
		}
		id, err := c.cfg.D.ParseID(raw)
		return count{id, spi.Status(st), int(n)}, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]map[spi.Status]int, len(ids))
	for _, id := range ids {
		out[id] = map[spi.Status]int{}
	}
	for _, r := range rows {
		if m := out[r.flow]; m != nil {
			m[r.status] += r.n
		}
	}
	return out, nil
}

// ListBatches returns a page of batches, newest first, with the counts of
// their live children. It implements [spi.BatchLister].
func (c Core[T]) ListBatches(ctx context.Context, p spi.SummaryParams) ([]spi.BatchSummary, uuid.UUID, error) {
	limit := p.PageSize()
	before := p.Before
	if before == uuid.Nil {
		before = uuid.Max
	}
	q, args := c.cfg.D.Syntax.listBatches(before, limit+1)
	batches, err := queryAll(ctx, c, "list batches", q, args, c.scanBatch)
	if err != nil {
		return nil, uuid.Nil, err
	}
	next := uuid.Nil
	if len(batches) > limit {
		batches = batches[:limit]
		next = batches[limit-1].ID
	}
	if len(batches) == 0 {
		return nil, uuid.Nil, nil
	}
	ids := make([]uuid.UUID, len(batches))
	for i, b := range batches {
		ids[i] = b.ID
	}
	var counts map[uuid.UUID]map[spi.Status]int
	err = c.do("list batches", func() error {
		var ferr error
		counts, ferr = c.flowCounts(ctx, ids)
		return ferr
	})
	if err != nil {
		return nil, uuid.Nil, err
	}
	out := make([]spi.BatchSummary, len(batches))
	for i, b := range batches {
		out[i] = spi.BatchSummary{Batch: b, Counts: counts[b.ID]}
	}
	return out, next, nil
}

// lastWorkflow reads the greatest workflow id below before (no row for
// none): one probe of the workflow index.
func (s *Syntax) lastWorkflow(before uuid.UUID) (string, []any) {
	return s.limited("SELECT workflow_id FROM {job} WHERE workflow_id < ? ORDER BY workflow_id DESC", 1, s.id(before))
}

// batchesAmong reads the ids of ids that are batches.
func (s *Syntax) batchesAmong(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT batch_id FROM {batch} WHERE batch_id IN (?)", s.ids(ids))
}

// workflowRoots reads (workflow_id, task_name, created_time) of the first
// job (the least id) of each workflow of ids: every job of them is read
// through the workflow index, each with one probe of the same index for
// a job before it (no MIN: PostgreSQL has none for uuid).
func (s *Syntax) workflowRoots(ids []uuid.UUID) (string, []any) {
	return s.SQL(`SELECT j.workflow_id, j.task_name, j.created_time FROM {job} j WHERE j.workflow_id IN (?)
	AND NOT EXISTS (SELECT 1 FROM {job} k WHERE k.workflow_id = j.workflow_id AND k.job_id < j.job_id)`, s.ids(ids))
}

// flowCounts reads (workflow_id, status, count) of the live jobs of the
// workflows (batches) of ids.
func (s *Syntax) flowCounts(ids []uuid.UUID) (string, []any) {
	c := s.batchStatus()
	return s.SQL("SELECT workflow_id, "+c+", COUNT(*) FROM {job} WHERE workflow_id IN (?) GROUP BY workflow_id, "+c, s.ids(ids))
}

// listBatches reads up to n batches below before, newest first.
func (s *Syntax) listBatches(before uuid.UUID, n int) (string, []any) {
	return s.limited("SELECT "+batchColumns+" FROM {batch} WHERE batch_id < ? ORDER BY batch_id DESC", int64(n), s.id(before))
}

// listStatements are the statements of the lists, by golden file name.
func (s *Syntax) listStatements() map[string]string {
	text := func(q string, _ []any) string { return q }
	two := make([]uuid.UUID, 2)
	return map[string]string{
		"workflow_last":      text(s.lastWorkflow(uuid.Nil)),
		"workflow_batches_2": text(s.batchesAmong(two)),
		"workflow_roots_2":   text(s.workflowRoots(two)),
		"workflow_counts_2":  text(s.flowCounts(two)),
		"batch_list":         text(s.listBatches(uuid.Nil, 10)),
	}
}
