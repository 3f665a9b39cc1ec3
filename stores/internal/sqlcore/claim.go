package sqlcore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Candidate is one due PENDING job that a claim considers, as the store's
// candidates statement returned it.
type Candidate struct {
	ID        uuid.UUID
	Priority  spi.Priority
	Scheduled time.Time
	// Resource is the permit the job needs, "" for none; Limit is its
	// permit limit.
	Resource string
	Limit    int64

	eff int64 // effective priority at the claim's time, set by Rank
}

// Rank sorts cands in claim order: effective priority at now (with the
// aging interval boost, see spi.EffectivePriority) descending, then
// scheduled time ascending, then id ascending. Aging is monotone inside a
// priority level, so the best n overall are among the best n of each level:
// a store reads those per level and ranks their union here.
func Rank(cands []Candidate, now time.Time, boost time.Duration) {
	for i := range cands {
		cands[i].eff = spi.EffectivePriority(cands[i].Priority, cands[i].Scheduled, now, boost)
	}
	slices.SortFunc(cands, func(a, b Candidate) int {
		if c := cmp.Compare(b.eff, a.eff); c != 0 {
			return c
		}
		if c := a.Scheduled.Compare(b.Scheduled); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
}

// Resources returns the distinct resources that the first limit of the
// ranked cands name, sorted by name (the order in which a store locks them,
// so that claimers cannot deadlock on them); nil when none of them names
// one, and the claim then needs no permit count.
func Resources(cands []Candidate, limit int) []string {
	var out []string
	for _, c := range cands[:min(limit, len(cands))] {
		if c.Resource != "" && !slices.Contains(out, c.Resource) {
			out = append(out, c.Resource)
		}
	}
	if out == nil {
		return nil
	}
	// Resources further down may be admitted in place of full ones.
	for _, c := range cands[min(limit, len(cands)):] {
		if c.Resource != "" && !slices.Contains(out, c.Resource) {
			out = append(out, c.Resource)
		}
	}
	slices.Sort(out)
	return out
}

// Admit returns, in order, the first limit of the ranked cands whose
// resource has a free permit, counting the permits taken by the candidates
// admitted before them. held is the number of RUNNING holders of each
// resource, and is updated. Jobs of a full resource are skipped, not waited
// for.
func Admit(cands []Candidate, limit int, held map[string]int64) []Candidate {
	out := make([]Candidate, 0, min(limit, len(cands)))
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		if c.Resource != "" {
			if held[c.Resource] >= c.Limit {
				continue
			}
			held[c.Resource]++
		}
		out = append(out, c)
	}
	return out
}

// IDs returns the ids of cands, in order.
func IDs(cands []Candidate) []uuid.UUID {
	ids := make([]uuid.UUID, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	return ids
}

// SortClaimed puts claimed jobs in claim order (see Rank), as
// spi.Store.ClaimJobs returns them.
func SortClaimed(jobs []*spi.Job, now time.Time, boost time.Duration) {
	slices.SortFunc(jobs, func(a, b *spi.Job) int {
		ea := spi.EffectivePriority(a.Priority, a.ScheduledAt, now, boost)
		eb := spi.EffectivePriority(b.Priority, b.ScheduledAt, now, boost)
		if c := cmp.Compare(eb, ea); c != 0 {
			return c
		}
		if c := a.ScheduledAt.Compare(b.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
}

// ClaimTasks returns the tasks a claim reads, sorted and without
// duplicates: p.Tasks, or, when p.Tasks is empty (a claim of any task),
// the tasks that have PENDING jobs, read by pending. The claim index is
// led by the task, so a claim reads one range per task and priority level
// and a backlog of a task it does not list costs it nothing; a claim of
// any task pays one read of the distinct pending tasks (a loose index scan
// where the dialect has one) instead.
func ClaimTasks(p spi.ClaimParams, pending func() ([]string, error)) ([]string, error) {
	tasks := p.Tasks
	if len(tasks) == 0 {
		var err error
		if tasks, err = pending(); err != nil {
			return nil, fmt.Errorf("read the tasks of the pending jobs: %w", err)
		}
	}
	return spi.TaskSet(tasks), nil
}

// ClaimTasksSQL is ClaimTasks for the database/sql stores: pendingSQL (for
// example PendingTasksSQL) reads the tasks of the pending jobs through q.
func ClaimTasksSQL(ctx context.Context, q Querier, p spi.ClaimParams, pendingSQL string) ([]string, error) {
	return ClaimTasks(p, func() ([]string, error) {
		rows, err := q.QueryContext(ctx, pendingSQL)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return ReadColumn[string](rows)
	})
}

// PendingTasksSQL is the read of the distinct tasks of the PENDING jobs in
// table, for ClaimTasks, in the dialects that have WITH RECURSIVE and
// LIMIT (PostgreSQL, MySQL / MariaDB, SQLite): a loose index scan of the
// task-led claim index, one index probe per task, however many jobs each
// has. claimTask is the dialect's Syntax.ClaimTask.
func PendingTasksSQL(table, claimTask string) string {
	return pendingTasksCTE(table, claimKey(claimTask)) + `
		SELECT name FROM t WHERE name IS NOT NULL`
}

// pendingTasksCTE is the loose index scan of PendingTasksSQL as a common
// table expression t (name), its last row NULL.
func pendingTasksCTE(table string, k claimKey) string {
	return `WITH RECURSIVE t (name) AS (
			SELECT (SELECT ` + k.task("") + ` FROM ` + table + ` WHERE ` + k.pending("") + ` ORDER BY ` + k.task("") + ` LIMIT 1)
			UNION ALL
			SELECT (SELECT ` + k.task("") + ` FROM ` + table + ` WHERE ` + k.pending("") + ` AND ` + k.task("") + ` > t.name ORDER BY ` + k.task("") + ` LIMIT 1)
			FROM t WHERE t.name IS NOT NULL)`
}

// claimKey names the PENDING jobs of a task in the statements that read
// them through the claim index: a dialect's virtual column that holds the
// task of a PENDING job and NULL for the others (Syntax.ClaimTask), or,
// when empty, task_name of the rows whose status is PENDING (the columns
// of a partial index, or of an index led by status).
type claimKey string

// task is the column of the task, after alias ("x." or "").
func (k claimKey) task(alias string) string {
	if k == "" {
		return alias + "task_name"
	}
	return alias + string(k)
}

// pending is the condition that the row is a PENDING job.
func (k claimKey) pending(alias string) string {
	if k == "" {
		return alias + "status = 'PENDING'"
	}
	return alias + string(k) + " IS NOT NULL"
}

// of is the condition that the row is a PENDING job of the task task (a
// placeholder or a column).
func (k claimKey) of(alias, task string) string {
	if k == "" {
		return alias + "status = 'PENDING' AND " + alias + "task_name = " + task
	}
	return alias + string(k) + " = " + task
}
