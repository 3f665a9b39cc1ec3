package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// listWorkflows reads a page of ListWorkflows, failing the case on an
// error, and checks its size against the limit.
func (f *fixture) listWorkflows(wl spi.WorkflowLister, p spi.SummaryParams) ([]spi.WorkflowSummary, uuid.UUID) {
	f.t.Helper()
	got, next, err := wl.ListWorkflows(f.ctx, p)
	require.NoError(f.t, err, "ListWorkflows(before %s, limit %d)", p.Before, p.Limit)
	require.LessOrEqual(f.t, len(got), p.PageSize(), "ListWorkflows returned more workflows than its limit")
	return got, next
}

// listBatches reads a page of ListBatches, failing the case on an error.
func (f *fixture) listBatches(bl spi.BatchLister, p spi.SummaryParams) ([]spi.BatchSummary, uuid.UUID) {
	f.t.Helper()
	got, next, err := bl.ListBatches(f.ctx, p)
	require.NoError(f.t, err, "ListBatches(before %s, limit %d)", p.Before, p.Limit)
	require.LessOrEqual(f.t, len(got), p.PageSize(), "ListBatches returned more batches than its limit")
	for i, b := range got {
		require.NotNil(f.t, b.Batch, "ListBatches: summary %d without its batch", i)
	}
	return got, next
}

func workflowIDs(ws []spi.WorkflowSummary) []uuid.UUID {
	out := make([]uuid.UUID, len(ws))
	for i, w := range ws {
		out[i] = w.ID
	}
	return out
}

func batchIDs(bs []spi.BatchSummary) []uuid.UUID {
	out := make([]uuid.UUID, len(bs))
	for i, b := range bs {
		out[i] = b.Batch.ID
	}
	return out
}

// counts is a map of counts by status, without the zero ones, for
// comparisons.
func counts(m map[spi.Status]int) map[spi.Status]int {
	out := map[spi.Status]int{}
	for st, n := range m {
		if n != 0 {
			out[st] = n
		}
	}
	return out
}

// workflowListCases are the cases of spi.WorkflowLister.
func workflowListCases() []testCase {
	return []testCase{
		{"NewestFirst", func(t tb, f *fixture) {
			wl := capability[spi.WorkflowLister](f, "spi.WorkflowLister")
			var flows []*flow
			for i, task := range []string{"tck.wf.first", "tck.wf.second", "tck.wf.third"} {
				w := f.newFlow()
				root := w.add(nil, withTask(task), withCreated(at(time.Duration(i-5)*time.Hour)))
				w.add([]spi.Dependency{dep(root, 0)}, withCreated(root.CreatedAt))
				w.insert()
				flows = append(flows, w)
			}
			f.insertOne() // a job of no workflow
			if bs, ok := pick[spi.BatchStore](f.s); ok {
				b := f.newBatch("tck not a workflow", false)
				f.createBatch(bs, b, f.children(b, 2), true)
			}
			got, next := f.listWorkflows(wl, spi.SummaryParams{})
			require.Equal(t, []uuid.UUID{flows[2].id, flows[1].id, flows[0].id}, workflowIDs(got),
				"every workflow, newest (highest id) first; no batch, no job of no workflow")
			assert.Equal(t, uuid.Nil, next, "the one page is the last")
			for i, w := range got {
				want := flows[2-i]
				assert.Equal(t, want.jobs[0].TaskName, w.RootTask, "workflow %s: RootTask is the task of its first job", w.ID)
				assertInstant(t, want.jobs[0].CreatedAt, w.CreatedAt, "workflow "+w.ID.String()+": CreatedAt")
				assert.Equal(t, map[spi.Status]int{spi.StatusPending: 1, spi.StatusBlocked: 1}, counts(w.Counts),
					"workflow %s: its jobs by status", w.ID)
			}
		}},
		{"Paging", func(t tb, f *fixture) {
			wl := capability[spi.WorkflowLister](f, "spi.WorkflowLister")
			var ids []uuid.UUID // oldest first
			for range 5 {
				w := f.newFlow()
				w.after(w.add(nil))
				w.insert()
				ids = append(ids, w.id)
			}
			var seen []uuid.UUID
			p := spi.SummaryParams{Limit: 2}
			for page := 0; ; page++ {
				require.Less(t, page, 5, "ListWorkflows pages do not end")
				got, next := f.listWorkflows(wl, p)
				require.NotEmpty(t, got, "page %d after %s is empty", page, p.Before)
				seen = append(seen, workflowIDs(got)...)
				if next == uuid.Nil {
					break
				}
				assert.Equal(t, got[len(got)-1].ID, next, "the next cursor is the last id of the page")
				p.Before = next
			}
			assert.Equal(t, []uuid.UUID{ids[4], ids[3], ids[2], ids[1], ids[0]}, seen, "pages of 2, newest first, each workflow once")
			got, _ := f.listWorkflows(wl, spi.SummaryParams{Before: ids[2]})
			assert.Equal(t, []uuid.UUID{ids[1], ids[0]}, workflowIDs(got), "only the workflows below the cursor")
		}},
		{"SingleStep", func(t tb, f *fixture) {
			wl := capability[spi.WorkflowLister](f, "spi.WorkflowLister")
			w := f.newFlow() // one step: no edge, but a workflow id
			only := w.add(nil, withTask("tck.wf.only"))
			w.insert()
			assert.Equal(t, w.id, f.get(only.ID).WorkflowID, "the job of a workflow of one step reads back with its workflow id")
			got, _ := f.listWorkflows(wl, spi.SummaryParams{})
			require.Equal(t, []uuid.UUID{w.id}, workflowIDs(got), "a workflow of one step is listed")
			assert.Equal(t, "tck.wf.only", got[0].RootTask)
			assert.Equal(t, map[spi.Status]int{spi.StatusPending: 1}, counts(got[0].Counts))
		}},
		{"ProgressMoves", func(t tb, f *fixture) {
			wl := capability[spi.WorkflowLister](f, "spi.WorkflowLister")
			f.workflows()
			w := f.newFlow()
			root := w.add(nil, withTask("tck.wf.root"))
			mid := w.after(root)
			last := w.add([]spi.Dependency{dep(mid, spi.AllowFailed)})
			w.insert()
			progress := func(want map[spi.Status]int, msg string) {
				t.Helper()
				got, _ := f.listWorkflows(wl, spi.SummaryParams{})
				if assert.Len(t, got, 1, msg) {
					assert.Equal(t, want, counts(got[0].Counts), "%s: counts by status", msg)
				}
			}
			progress(map[spi.Status]int{spi.StatusPending: 1, spi.StatusBlocked: 2}, "submitted")
			f.finish(root, at(time.Second), spi.OutcomeSucceeded)
			progress(map[spi.Status]int{spi.StatusSucceeded: 1, spi.StatusPending: 1, spi.StatusBlocked: 1}, "after the root succeeded")
			f.finish(mid, at(2*time.Second), spi.OutcomeFailed)
			progress(map[spi.Status]int{spi.StatusSucceeded: 1, spi.StatusFailed: 1, spi.StatusPending: 1}, "after the middle failed")
			f.finish(last, at(3*time.Second), spi.OutcomeSucceeded)
			progress(map[spi.Status]int{spi.StatusSucceeded: 2, spi.StatusFailed: 1}, "finished")
		}},
	}
}

// batchListCases are the cases of spi.BatchLister.
func batchListCases() []testCase {
	return []testCase{
		{"NewestFirstAndPaging", func(t tb, f *fixture) {
			bl := capability[spi.BatchLister](f, "spi.BatchLister")
			bs := f.batches()
			var made []*spi.Batch // oldest first
			for i, name := range []string{"tck first", "tck second", "tck third"} {
				b := f.newBatch(name, i == 0)
				f.createBatch(bs, b, f.children(b, 2-i), i != 1)
				made = append(made, b)
			}
			w := f.newFlow() // a workflow is not a batch
			w.after(w.add(nil))
			w.insert()

			got, next := f.listBatches(bl, spi.SummaryParams{Limit: 2})
			require.Equal(t, []uuid.UUID{made[2].ID, made[1].ID}, batchIDs(got), "the first page: the two newest")
			assert.Equal(t, made[1].ID, next, "the next cursor is the last id of the page")
			rest, last := f.listBatches(bl, spi.SummaryParams{Before: next, Limit: 2})
			require.Equal(t, []uuid.UUID{made[0].ID}, batchIDs(rest), "the second page: the oldest")
			assert.Equal(t, uuid.Nil, last, "the second page is the last")

			all, _ := f.listBatches(bl, spi.SummaryParams{})
			require.Len(t, all, 3, "the default limit lists all three")
			for i, s := range all {
				want := made[2-i]
				n := int64(i) // batch i of the list (made[2-i]) has i children
				assertBatch(t, want, s.Batch, n, i != 1, "", time.Time{}, uuid.Nil, "listed batch "+want.Name)
				wantCounts := map[spi.Status]int{}
				if n > 0 {
					wantCounts[spi.StatusPending] = int(n)
				}
				assert.Equal(t, wantCounts, counts(s.Counts), "listed batch %q: its children by status", want.Name)
			}
		}},
		{"ProgressMoves", func(t tb, f *fixture) {
			bl := capability[spi.BatchLister](f, "spi.BatchLister")
			bs := f.batches()
			b := f.newBatch("tck progress", false)
			kids := f.children(b, 3)
			kids[1].ScheduledAt, kids[2].ScheduledAt = at(time.Minute), at(time.Hour)
			f.createBatch(bs, b, kids, true)
			progress := func(want map[spi.Status]int, outcome spi.BatchOutcome, msg string) {
				t.Helper()
				got, _ := f.listBatches(bl, spi.SummaryParams{})
				if assert.Len(t, got, 1, msg) {
					assert.Equal(t, want, counts(got[0].Counts), "%s: counts by status", msg)
					assert.Equal(t, outcome, got[0].Batch.Outcome, "%s: outcome", msg)
				}
			}
			progress(map[spi.Status]int{spi.StatusPending: 3}, "", "submitted")
			f.finish(kids[0], at(time.Second), spi.OutcomeSucceeded)
			progress(map[spi.Status]int{spi.StatusSucceeded: 1, spi.StatusPending: 2}, "", "one child succeeded")
			f.finish(kids[1], at(2*time.Minute), spi.OutcomeFailed)
			progress(map[spi.Status]int{spi.StatusSucceeded: 1, spi.StatusFailed: 1, spi.StatusPending: 1}, "", "one child failed")
			f.finish(kids[2], at(2*time.Hour), spi.OutcomeSucceeded)
			progress(map[spi.Status]int{spi.StatusSucceeded: 2, spi.StatusFailed: 1}, "", "every child finished")
			require.Len(t, f.finishBatches(bs, at(3*time.Hour), 10), 1, "FinishBatches ends the batch")
			progress(map[spi.Status]int{spi.StatusSucceeded: 2, spi.StatusFailed: 1}, spi.BatchFailed, "ended")
		}},
	}
}
