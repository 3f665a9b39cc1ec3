package tck

import (
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// workflows returns the case's store as a WorkflowStore, or skips the case.
func (f *fixture) workflows() spi.WorkflowStore {
	f.t.Helper()
	return capability[spi.WorkflowStore](f, "spi.WorkflowStore")
}

// flow builds the jobs of one workflow: add appends a job that depends on
// the given jobs (each with what it allows), counting their dependents.
type flow struct {
	f    *fixture
	id   uuid.UUID
	jobs []*spi.Job
}

func (f *fixture) newFlow() *flow { return &flow{f: f, id: f.nextID()} }

// dep is a dependency on parent allowing allow.
func dep(parent *spi.Job, allow spi.Allow) spi.Dependency {
	return spi.Dependency{ParentID: parent.ID, Allow: allow}
}

// add appends a job of the workflow depending on deps.
func (w *flow) add(deps []spi.Dependency, opts ...jobOpt) *spi.Job {
	j := w.f.newJob(opts...)
	j.WorkflowID = w.id
	j.Dependencies = deps
	for _, d := range deps {
		for _, p := range w.jobs {
			if p.ID == d.ParentID {
				p.Dependents++
			}
		}
	}
	w.jobs = append(w.jobs, j)
	return j
}

// after is add with plain dependencies (SUCCEEDED only) on parents.
func (w *flow) after(parents ...*spi.Job) *spi.Job {
	deps := make([]spi.Dependency, len(parents))
	for i, p := range parents {
		deps[i] = dep(p, 0)
	}
	return w.add(deps)
}

// insert writes the workflow's jobs in one InsertJobs.
func (w *flow) insert() { w.f.insert(w.jobs...) }

// finish claims j alone at now and completes it with outcome (a reason
// as its last error for a failure, skip or cancel), as the engine does:
// HasDependents from the claimed job.
func (f *fixture) finish(j *spi.Job, now time.Time, o spi.Outcome) spi.Completion {
	f.t.Helper()
	c := f.claimOne(j.ID, "node-a", now)
	w := spi.Completion{ClaimRef: ref(c), Outcome: o, FinishedAt: now, HasDependents: c.Dependents > 0}
	switch o {
	case spi.OutcomeSucceeded:
		w.Result, w.ResultType = []byte(`{"ok":true}`), "tck.result"
	case spi.OutcomeFailed:
		w.Attempts, w.LastError = 1, "boom"
	case spi.OutcomeSkipped:
		w.LastError = "dependency said skip"
	case spi.OutcomeCancelled:
		w.LastError = spi.DependencyCancelPrefix + "test"
	}
	require.Equal(f.t, []bool{true}, f.complete(w), "completing %s with outcome %d", j.ID, o)
	return w
}

// deps reads the dependencies of j.
func (f *fixture) deps(ws spi.WorkflowStore, j *spi.Job) []spi.Dependency {
	f.t.Helper()
	ds, err := ws.Dependencies(f.ctx, j.ID)
	require.NoError(f.t, err, "Dependencies(%s)", j.ID)
	return ds
}

// parentStates returns the ParentStatus of each dependency of j.
func (f *fixture) parentStates(ws spi.WorkflowStore, j *spi.Job) []spi.Status {
	f.t.Helper()
	var out []spi.Status
	for _, d := range f.deps(ws, j) {
		out = append(out, d.ParentStatus)
	}
	return out
}

// status returns the status of job j, with how many dependencies it waits for.
func (f *fixture) waiting(j *spi.Job) (spi.Status, int) {
	f.t.Helper()
	g := f.get(j.ID)
	return g.Status, g.Waiting
}

func workflowCases() []testCase {
	return []testCase{
		cancelRunningParentCase(),
		{"InsertBlocked", func(t tb, f *fixture) {
			ws := f.workflows()
			w := f.newFlow()
			a := w.add(nil)
			b := w.after(a)
			c := w.add([]spi.Dependency{
				{ParentID: a.ID, Allow: spi.AllowSucceeded | spi.AllowFailed, Condition: "tck.big", ConditionArgs: []byte(`{"min":10}`)},
				dep(b, spi.AllowSkipped|spi.SkipUnlessAllowed)})
			w.insert()
			ga, gb, gc := f.get(a.ID), f.get(b.ID), f.get(c.ID)
			assert.Equal(t, spi.StatusPending, ga.Status, "a job without dependencies is PENDING")
			assert.Equal(t, []int{0, 0, 2}, []int{ga.DependencyCount, ga.Waiting, ga.Dependents}, "root: DependencyCount, Waiting, Dependents")
			assert.Equal(t, spi.StatusBlocked, gb.Status, "a job with dependencies is BLOCKED")
			assert.Equal(t, []int{1, 1, 1}, []int{gb.DependencyCount, gb.Waiting, gb.Dependents}, "chain: DependencyCount, Waiting, Dependents")
			assert.Equal(t, []int{2, 2, 0}, []int{gc.DependencyCount, gc.Waiting, gc.Dependents}, "join: DependencyCount, Waiting, Dependents")
			for _, g := range []*spi.Job{ga, gb, gc} {
				assert.Equal(t, w.id, g.WorkflowID, "job %s keeps its workflow id", g.ID)
				assert.Nil(t, g.Dependencies, "job reads leave Dependencies nil")
			}
			assert.Equal(t, []spi.Dependency{
				{ParentID: a.ID, Allow: spi.AllowSucceeded | spi.AllowFailed, Condition: "tck.big", ConditionArgs: []byte(`{"min":10}`)},
				{ParentID: b.ID, Allow: spi.AllowSkipped | spi.SkipUnlessAllowed}}, f.deps(ws, c), "the dependencies come back in insert order, none finished")
			assert.Empty(t, f.deps(ws, a), "a root has no dependencies")
			_, err := ws.Dependencies(f.ctx, f.nextID())
			assert.ErrorIs(t, err, spi.ErrNotFound, "Dependencies of an unknown job")
			got := f.claim("node-a", 10, at(time.Hour), 0)
			assert.Equal(t, []uuid.UUID{a.ID}, ids(got), "only the root is claimable: BLOCKED jobs are never claimed")
			blocked := f.listAll(spi.StatusBlocked)
			assert.ElementsMatch(t, []uuid.UUID{b.ID, c.ID}, ids(blocked), "ListJobs filters by BLOCKED")
		}},
		{"ReleaseOnLastParent", func(t tb, f *fixture) {
			ws := f.workflows()
			w := f.newFlow()
			a := w.add(nil)
			b := w.after(a)
			c := w.after(a, b)
			late := w.add([]spi.Dependency{dep(a, 0)}, withDue(at(5*time.Hour)))
			w.insert()
			f.finish(a, at(time.Hour), spi.OutcomeSucceeded)
			gb := f.get(b.ID)
			assert.Equal(t, spi.StatusPending, gb.Status, "the last parent's success releases its child")
			assert.Equal(t, 0, gb.Waiting, "a released job waits for nothing")
			assert.True(t, gb.ScheduledAt.Equal(at(time.Hour)), "a released job is due at its release (%s), not at its old due time (%s)", at(time.Hour), gb.ScheduledAt)
			assert.True(t, f.get(late.ID).ScheduledAt.Equal(at(5*time.Hour)), "a released job due later keeps its due time")
			st, n := f.waiting(c)
			assert.Equal(t, spi.StatusBlocked, st, "a join waits for all its parents")
			assert.Equal(t, 1, n, "the join waits for one parent more")
			assert.Equal(t, []spi.Status{spi.StatusSucceeded, ""}, f.parentStates(ws, c), "the finished parent's state is recorded on the dependency")
			f.finish(b, at(2*time.Hour), spi.OutcomeSucceeded)
			st, n = f.waiting(c)
			assert.Equal(t, spi.StatusPending, st, "the join is released by its last parent")
			assert.Equal(t, 0, n)
			assert.Equal(t, []spi.Status{spi.StatusSucceeded, spi.StatusSucceeded}, f.parentStates(ws, c))
			got := f.claim("node-b", 10, at(3*time.Hour), 0)
			assert.Equal(t, []uuid.UUID{c.ID}, ids(got), "the released join is claimable (the later job is not due)")
		}},
		{"ReleaseOnEveryFinish", func(t tb, f *fixture) {
			// Failure, skip, cancel (completion and CancelJob) and a
			// crash-budget failure of recovery each release the children,
			// recording the state.
			ws := f.workflows()
			w := f.newFlow()
			failedP, skipped, cancelled, withdrawn, crashed := w.add(nil), w.add(nil), w.add(nil), w.add(nil), w.add(nil)
			kids := map[*spi.Job]*spi.Job{}
			for _, p := range []*spi.Job{failedP, skipped, cancelled, withdrawn, crashed} {
				kids[p] = w.add([]spi.Dependency{dep(p, spi.AllowFailed)})
			}
			w.insert()
			now := at(time.Hour)
			f.finish(failedP, now, spi.OutcomeFailed)
			f.finish(skipped, now, spi.OutcomeSkipped)
			cw := f.finish(cancelled, now, spi.OutcomeCancelled)
			g := f.get(cancelled.ID)
			assert.Equal(t, spi.StatusCancelled, g.Status, "OutcomeCancelled finishes the job CANCELLED")
			assert.Equal(t, cw.LastError, g.LastError, "OutcomeCancelled stores the reason")
			assert.True(t, g.FinishedAt.Equal(now), "OutcomeCancelled sets the finish time")
			assert.Equal(t, spi.StatusSkipped, f.get(skipped.ID).Status, "OutcomeSkipped finishes the job SKIPPED")
			assert.Equal(t, []bool{true}, f.complete(cw), "a resent skip or cancel that applied counts as applied")
			require.NoError(t, f.s.CancelJob(f.ctx, withdrawn.ID, now), "CancelJob of a PENDING parent")
			f.claimOne(crashed.ID, "node-dead", now)
			rec := f.recover(spi.RecoverParams{Now: now.Add(time.Minute), Grace: time.Second, MaxCrashRedeliveries: 0, LastError: "crashed"})
			require.Len(t, rec, 1)
			assert.Equal(t, spi.StatusFailed, rec[0].NewStatus)
			for p, want := range map[*spi.Job]spi.Status{failedP: spi.StatusFailed, skipped: spi.StatusSkipped,
				cancelled: spi.StatusCancelled, withdrawn: spi.StatusCancelled, crashed: spi.StatusFailed} {
				st, n := f.waiting(kids[p])
				assert.Equal(t, spi.StatusPending, st, "a parent finishing %s releases its child", want)
				assert.Equal(t, 0, n)
				assert.Equal(t, []spi.Status{want}, f.parentStates(ws, kids[p]), "the child sees its parent %s", want)
			}
		}},
		{"CancelBlocked", func(t tb, f *fixture) {
			ws := f.workflows()
			w := f.newFlow()
			a := w.add(nil)
			b := w.after(a)
			c := w.after(b)
			w.insert()
			require.NoError(t, f.s.CancelJob(f.ctx, b.ID, at(time.Minute)), "CancelJob of a BLOCKED job")
			st, _ := f.waiting(b)
			assert.Equal(t, spi.StatusCancelled, st)
			st, _ = f.waiting(c)
			assert.Equal(t, spi.StatusPending, st, "cancelling a BLOCKED parent releases its child")
			assert.Equal(t, []spi.Status{spi.StatusCancelled}, f.parentStates(ws, c))
			f.finish(a, at(time.Hour), spi.OutcomeSucceeded)
			st, _ = f.waiting(b)
			assert.Equal(t, spi.StatusCancelled, st, "a parent finishing does not revive a cancelled child")
		}},
		{"ConcurrentParents", func(t tb, f *fixture) {
			// Two parents of each join finish at the same instant in
			// different batches (on two handles with Reopen): every join
			// is released exactly once, none stays BLOCKED.
			f.workflows()
			const joins = 20
			w := f.newFlow()
			var left, right, kids []*spi.Job
			for range joins {
				left, right = append(left, w.add(nil)), append(right, w.add(nil))
			}
			for i := range joins {
				kids = append(kids, w.after(left[i], right[i]))
			}
			w.insert()
			now := at(time.Hour)
			claimed := f.claim("node-a", 2*joins, now, 0)
			require.Len(t, claimed, 2*joins)
			byID := map[uuid.UUID]*spi.Job{}
			for _, j := range claimed {
				byID[j.ID] = j
			}
			hs := f.handles()
			var wg sync.WaitGroup
			errs := make([]error, 2*joins)
			start := make(chan struct{})
			for i := range joins {
				for k, p := range []*spi.Job{left[i], right[i]} {
					cj := byID[p.ID]
					s := hs[(i+k)%len(hs)]
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						res, err := s.CompleteJobs(f.ctx, []spi.Completion{{ClaimRef: ref(cj), Outcome: spi.OutcomeSucceeded,
							FinishedAt: now, HasDependents: true}})
						if err == nil && (len(res) != 1 || !res[0]) {
							err = errors.New("the completion did not apply")
						}
						errs[2*i+k] = err
					}()
				}
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "completion %d", i)
			}
			for _, k := range kids {
				st, n := f.waiting(k)
				assert.Equal(t, spi.StatusPending, st, "join %s after both parents finished at once", k.ID)
				assert.Equal(t, 0, n, "join %s waits for nothing", k.ID)
			}
			got := f.claim("node-b", 3*joins, now.Add(time.Minute), 0)
			assert.ElementsMatch(t, ids(kids), ids(got), "every join is claimable once")
		}},
		{"RetryRevives", func(t tb, f *fixture) {
			// A failed step cancelled its dependents and theirs, and its
			// failure callback ran; retrying it from the DLQ makes the
			// cancelled ones wait for it again, and leaves the callback.
			ws := f.workflows()
			w := f.newFlow()
			other := w.add(nil)
			a := w.add(nil, withDue(at(30*time.Minute)))
			b := w.after(a, other)
			c := w.after(b)
			onFail := w.add([]spi.Dependency{dep(a, spi.AllowFailed|spi.SkipUnlessAllowed)})
			onOK := w.add([]spi.Dependency{dep(a, spi.SkipUnlessAllowed)})
			manual := w.after(a)
			w.insert()
			f.finish(other, at(time.Minute), spi.OutcomeSucceeded)
			require.NoError(t, f.s.CancelJob(f.ctx, manual.ID, at(2*time.Minute)), "a manual cancel")
			f.finish(a, at(time.Hour), spi.OutcomeFailed)
			// Released at once, claimed in id order: b, the callbacks, then c.
			f.finish(b, at(2*time.Hour), spi.OutcomeCancelled)
			f.finish(onFail, at(3*time.Hour), spi.OutcomeSucceeded)
			ok := f.claimOne(onOK.ID, "node-a", at(4*time.Hour))
			require.Equal(t, []bool{true}, f.complete(spi.Completion{ClaimRef: ref(ok), Outcome: spi.OutcomeSkipped,
				FinishedAt: at(4 * time.Hour), LastError: spi.DependencyCancelPrefix + a.ID.String() + " ended FAILED"}))
			f.finish(c, at(5*time.Hour), spi.OutcomeCancelled)

			require.NoError(t, f.s.RetryFailedJob(f.ctx, a.ID, at(6*time.Hour)))
			for _, k := range []*spi.Job{b, c, onOK} {
				g := f.get(k.ID)
				assert.Equal(t, spi.StatusBlocked, g.Status, "job %s, cancelled or skipped by the failure, waits again", k.ID)
				assert.Equal(t, 1, g.Waiting, "job %s waits for one parent", k.ID)
				assert.True(t, g.FinishedAt.IsZero(), "a revived job has no finish time")
				assert.Empty(t, g.LastError, "a revived job has no error")
			}
			assert.Equal(t, []spi.Status{"", spi.StatusSucceeded}, f.parentStates(ws, b), "the revived job waits for the retried parent, not the other")
			assert.Equal(t, []spi.Status{""}, f.parentStates(ws, c))
			st, _ := f.waiting(onFail)
			assert.Equal(t, spi.StatusSucceeded, st, "the failure callback that ran stays")
			st, _ = f.waiting(manual)
			assert.Equal(t, spi.StatusCancelled, st, "a job cancelled by hand stays cancelled")
			f.finish(a, at(7*time.Hour), spi.OutcomeSucceeded)
			for _, k := range []*spi.Job{b, onOK} {
				st, _ := f.waiting(k)
				assert.Equal(t, spi.StatusPending, st, "the retried parent's success releases %s", k.ID)
			}
			st, _ = f.waiting(c)
			assert.Equal(t, spi.StatusBlocked, st, "the grandchild still waits for its parent")
		}},
		{"CancelWorkflow", func(t tb, f *fixture) {
			ws := f.workflows()
			w := f.newFlow()
			a := w.add(nil)
			b := w.after(a)
			root2 := w.add(nil)
			done := w.add(nil, withPriority(spi.PriorityCritical))
			w.insert()
			bystander := f.insertOne()
			now := at(time.Hour)
			f.finish(done, now, spi.OutcomeSucceeded)
			got := f.claim("node-a", 1, now, 0)
			require.Len(t, got, 1)
			ca := got[0]
			require.Contains(t, []uuid.UUID{a.ID, root2.ID, bystander.ID}, ca.ID)
			if ca.ID != a.ID {
				t.Skipf("the claim took %s first; the case needs the workflow's root running", ca.ID)
			}
			n, err := ws.CancelWorkflow(f.ctx, w.id, now.Add(time.Minute))
			require.NoError(t, err, "CancelWorkflow")
			assert.Equal(t, 3, n, "the running, blocked and pending jobs are cancelled")
			for _, j := range []*spi.Job{a, b, root2} {
				g := f.get(j.ID)
				assert.Equal(t, spi.StatusCancelled, g.Status, "job %s of the cancelled workflow", j.ID)
				assert.True(t, g.FinishedAt.Equal(now.Add(time.Minute)), "job %s: cancelled at now", j.ID)
			}
			ga := f.get(a.ID)
			assert.Greater(t, ga.ClaimSeq, ca.ClaimSeq, "cancelling a RUNNING job advances its claim sequence")
			assert.Empty(t, ga.OwnerNode, "cancelling a RUNNING job clears its owner")
			assert.Equal(t, []bool{false}, f.complete(succeeded(ca, now.Add(2*time.Minute), nil, "")), "the old owner's completion is superseded")
			st, _ := f.waiting(done)
			assert.Equal(t, spi.StatusSucceeded, st, "a finished job stays as it was")
			st, _ = f.waiting(bystander)
			assert.Equal(t, spi.StatusPending, st, "a job of no workflow is not touched")
			n, err = ws.CancelWorkflow(f.ctx, w.id, now.Add(time.Hour))
			require.NoError(t, err)
			assert.Zero(t, n, "cancelling a finished workflow changes nothing")
		}},
		{"WorkflowJobs", func(t tb, f *fixture) {
			ws := f.workflows()
			w := f.newFlow()
			var all []*spi.Job
			prev := w.add(nil)
			all = append(all, prev)
			for range 6 {
				prev = w.after(prev)
				all = append(all, prev)
			}
			w.insert()
			f.insertOne()
			var seen []uuid.UUID
			var after uuid.UUID
			for range 10 {
				page, next, err := ws.WorkflowJobs(f.ctx, w.id, after, 3)
				require.NoError(t, err, "WorkflowJobs")
				require.LessOrEqual(t, len(page), 3)
				seen = append(seen, ids(page)...)
				if next == uuid.Nil {
					break
				}
				after = next
			}
			assert.Equal(t, ids(all), seen, "WorkflowJobs pages through the workflow's jobs in id order")
			listed, _, err := f.s.ListJobs(f.ctx, spi.ListParams{WorkflowID: w.id, Limit: 100})
			require.NoError(t, err, "ListJobs by WorkflowID")
			assert.Equal(t, ids(all), ids(listed), "ListJobs filters by WorkflowID")
			page, next, err := ws.WorkflowJobs(f.ctx, f.nextID(), uuid.Nil, 10)
			require.NoError(t, err)
			assert.Empty(t, page, "an unknown workflow has no jobs")
			assert.Equal(t, uuid.Nil, next)
		}},
		{"ArchiveKeepsParents", func(t tb, f *fixture) {
			ws := f.workflows()
			a := f.archiver()
			w := f.newFlow()
			p := w.add(nil)
			k := w.after(p)
			other := f.insertOne() // a finished job of no workflow
			f.finish(other, at(time.Minute), spi.OutcomeSucceeded)
			w.insert()
			f.finish(p, at(time.Minute), spi.OutcomeSucceeded)
			assert.Equal(t, 1, f.archive(a, at(24*time.Hour), 100), "a parent whose child has not finished stays live")
			f.get(p.ID)
			assert.Equal(t, []spi.Status{spi.StatusSucceeded}, f.parentStates(ws, k))
			f.finish(k, at(time.Hour), spi.OutcomeSucceeded)
			assert.Equal(t, 2, f.archive(a, at(24*time.Hour), 100), "once the child finished, both move")
			old, _, err := a.ListArchivedJobs(f.ctx, spi.ListParams{WorkflowID: w.id, Limit: 10})
			require.NoError(t, err, "ListArchivedJobs by WorkflowID")
			assert.Equal(t, ids([]*spi.Job{p, k}), ids(old), "the archive keeps the workflow id and filters by it")
		}},
		{"RejectsBadBatches", func(t tb, f *fixture) {
			f.workflows()
			bad := map[string]func(w *flow){
				"a dependency on a later job": func(w *flow) {
					a := w.add(nil)
					b := w.f.newJob()
					a.WorkflowID = w.id
					a.Dependencies = []spi.Dependency{dep(b, 0)}
					b.Dependents, b.WorkflowID = 1, w.id
					w.jobs = append(w.jobs, b)
				},
				"a dependency on an unknown job": func(w *flow) { w.add([]spi.Dependency{{ParentID: id(999_999)}}) },
				"a dependency on itself": func(w *flow) {
					a := w.add(nil)
					a.Dependencies, a.Dependents = []spi.Dependency{dep(a, 0)}, 1
				},
				"the same parent twice": func(w *flow) { a := w.add(nil); w.add([]spi.Dependency{dep(a, 0), dep(a, 0)}) },
				"a wrong Dependents":    func(w *flow) { a := w.add(nil); w.after(a); a.Dependents = 0 },
				"a key on a workflow job": func(w *flow) {
					a := w.add(nil)
					w.after(a).IdempotencyKey = "wf-key"
				},
				"no workflow id": func(w *flow) { a := w.add(nil); w.after(a).WorkflowID = uuid.Nil },
			}
			for name, build := range bad {
				w := f.newFlow()
				first := w.add(nil)
				build(w)
				_, err := f.s.InsertJobs(f.ctx, cloneJobs(w.jobs), spi.InsertOptions{})
				assert.Error(t, err, "InsertJobs of a workflow with %s", name)
				for _, j := range append([]*spi.Job{first}, w.jobs...) {
					_, err := f.s.GetJob(f.ctx, j.ID)
					assert.ErrorIs(t, err, spi.ErrNotFound, "a workflow with %s: nothing of it is written", name)
				}
			}
		}},
		{"Repair", func(t tb, f *fixture) {
			// A parent finished by a completion that did not say it has
			// dependents: the store may release the child at once; if not,
			// RepairWorkflows does, recording the parent's state.
			ws := f.workflows()
			w := f.newFlow()
			p := w.add(nil)
			k := w.after(p)
			blocked := w.after(w.add(nil))
			w.insert()
			c := f.claimOne(p.ID, "node-a", at(time.Minute))
			require.Equal(t, []bool{true}, f.complete(failed(c, at(time.Minute), 1, "boom")))
			n, err := ws.RepairWorkflows(f.ctx, at(time.Hour), 100)
			require.NoError(t, err, "RepairWorkflows")
			assert.LessOrEqual(t, n, 1, "RepairWorkflows releases at most the stranded child")
			st, left := f.waiting(k)
			assert.Equal(t, spi.StatusPending, st, "the child of a finished parent is released")
			assert.Equal(t, 0, left)
			assert.Equal(t, []spi.Status{spi.StatusFailed}, f.parentStates(ws, k), "the parent's state is on the dependency")
			st, _ = f.waiting(blocked)
			assert.Equal(t, spi.StatusBlocked, st, "RepairWorkflows leaves a child whose parent has not finished")
			n, err = ws.RepairWorkflows(f.ctx, at(2*time.Hour), 100)
			require.NoError(t, err)
			assert.Zero(t, n, "nothing is left to repair")
		}},
	}
}
