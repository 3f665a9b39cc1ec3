package tck

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// batches returns the case's store as a BatchStore, or skips the case.
func (f *fixture) batches() spi.BatchStore {
	f.t.Helper()
	return capability[spi.BatchStore](f, "spi.BatchStore")
}

// newBatch builds a batch (not written) named name, with an OnSuccess and
// an OnFailure callback when callbacks.
func (f *fixture) newBatch(name string, callbacks bool) *spi.Batch {
	b := &spi.Batch{ID: f.nextID(), Name: name, CreatedAt: at(-time.Hour)}
	if callbacks {
		cb := func(task string, p spi.Priority) *spi.Job {
			return f.newJob(withTask(task), withPriority(p), withTags("batch", "cb"),
				withParams(map[string]string{spi.BatchParam: b.ID.String()}), withPayload([]byte(`{"cb":"`+task+`"}`)))
		}
		b.OnSuccess, b.OnFailure = cb("tck.batch.success", spi.PriorityHigh), cb("tck.batch.failure", spi.PriorityLow)
	}
	return b
}

// children builds n children of batch b (not written).
func (f *fixture) children(b *spi.Batch, n int, opts ...jobOpt) []*spi.Job {
	out := make([]*spi.Job, n)
	for i := range out {
		out[i] = f.newJob(append([]jobOpt{withPayload([]byte(fmt.Sprintf(`{"item":%d}`, i)))}, opts...)...)
		out[i].WorkflowID = b.ID
	}
	return out
}

// chunk writes a chunk, failing the case on an error, and checks the
// persisted count it returns.
func (f *fixture) chunk(bs spi.BatchStore, c spi.BatchChunk) int64 {
	f.t.Helper()
	c.Children = cloneJobs(c.Children)
	n, err := bs.AddBatchChunk(f.ctx, c)
	require.NoError(f.t, err, "AddBatchChunk(batch %s, offset %d, %d children, seal %t)", c.BatchID, c.Offset, len(c.Children), c.Seal)
	require.Equal(f.t, c.Offset+int64(len(c.Children)), n, "AddBatchChunk returns the new persisted count: offset plus the chunk's children")
	return n
}

// createBatch writes b with children in one chunk, sealed when seal.
func (f *fixture) createBatch(bs spi.BatchStore, b *spi.Batch, children []*spi.Job, seal bool) {
	f.t.Helper()
	f.chunk(bs, spi.BatchChunk{BatchID: b.ID, Create: b.Clone(), Children: children, Seal: seal})
}

// getBatch reads batch id, failing the case on an error.
func (f *fixture) getBatch(bs spi.BatchStore, id uuid.UUID) *spi.Batch {
	f.t.Helper()
	b, err := bs.GetBatch(f.ctx, id)
	require.NoError(f.t, err, "GetBatch(%s)", id)
	require.NotNil(f.t, b, "GetBatch(%s) returned nil and no error", id)
	return b
}

// finishBatches runs FinishBatches, failing the case on an error.
func (f *fixture) finishBatches(bs spi.BatchStore, now time.Time, limit int) []spi.FinishedBatch {
	f.t.Helper()
	out, err := bs.FinishBatches(f.ctx, now, limit)
	require.NoError(f.t, err, "FinishBatches(now %s, limit %d)", now.Format(time.RFC3339Nano), limit)
	require.LessOrEqual(f.t, len(out), max(limit, 0), "FinishBatches ended more batches than its limit")
	return out
}

// settle claims every due job at now and completes each: failed when fail
// says so, else succeeded.
func (f *fixture) settle(now time.Time, fail func(*spi.Job) bool) {
	f.t.Helper()
	for {
		got := f.claim("node-a", 100, now, 0)
		if len(got) == 0 {
			return
		}
		cs := make([]spi.Completion, len(got))
		for i, j := range got {
			cs[i] = succeeded(j, now, []byte(`{"ok":1}`), "tck.result")
			if fail != nil && fail(j) {
				cs[i] = failed(j, now, 1, "tck: child failed")
			}
		}
		require.Equal(f.t, trues(len(cs)), f.complete(cs...), "completing the claimed children")
	}
}

func trues(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// assertBatch checks what GetBatch reads of b against what was created,
// with the progress fields given.
func assertBatch(t tb, want *spi.Batch, got *spi.Batch, persisted int64, sealed bool, o spi.BatchOutcome, finished time.Time, callback uuid.UUID, msg string) {
	t.Helper()
	assert.Equal(t, want.ID, got.ID, "%s: ID", msg)
	assert.Equal(t, want.Name, got.Name, "%s: Name", msg)
	assertInstant(t, want.CreatedAt, got.CreatedAt, msg+": CreatedAt")
	for _, cb := range []struct {
		name      string
		want, got *spi.Job
	}{{"OnSuccess", want.OnSuccess, got.OnSuccess}, {"OnFailure", want.OnFailure, got.OnFailure}} {
		if cb.want == nil {
			assert.Nil(t, cb.got, "%s: %s of a batch created without one", msg, cb.name)
			continue
		}
		if assert.NotNil(t, cb.got, "%s: %s reads back nil", msg, cb.name) {
			assert.Equal(t, normalized(cb.want), normalized(cb.got), "%s: %s reads back as created", msg, cb.name)
		}
	}
	assert.Equal(t, persisted, got.Persisted, "%s: Persisted", msg)
	assert.Equal(t, sealed, got.Sealed, "%s: Sealed", msg)
	assert.Equal(t, o, got.Outcome, "%s: Outcome", msg)
	assertInstant(t, finished, got.FinishedAt, msg+": FinishedAt")
	assert.Equal(t, callback, got.CallbackID, "%s: CallbackID", msg)
}

// assertAbsent checks that none of jobs was written.
func (f *fixture) assertAbsent(jobs []*spi.Job, msg string) {
	f.t.Helper()
	for _, j := range jobs {
		_, err := f.s.GetJob(f.ctx, j.ID)
		assert.ErrorIs(f.t, err, spi.ErrNotFound, "%s: job %s must not have been written", msg, j.ID)
	}
}

func batchCases() []testCase {
	return []testCase{
		{"CreateAndChunks", func(t tb, f *fixture) {
			bs := f.batches()
			b := f.newBatch("tck nightly ü", true)
			first := f.children(b, 3, withTags("eu"))
			f.createBatch(bs, b, first, false)
			assertBatch(t, b, f.getBatch(bs, b.ID), 3, false, "", time.Time{}, uuid.Nil, "after the creating chunk")
			for _, c := range first {
				assertJob(t, c, f.get(c.ID), "a child reads back PENDING, with the batch's id as its WorkflowID")
			}
			f.assertAbsent([]*spi.Job{b.OnSuccess, b.OnFailure}, "a callback is not a job before the batch ends")

			second := f.children(b, 2)
			f.chunk(bs, spi.BatchChunk{BatchID: b.ID, Offset: 3, Children: second})
			again := f.children(b, 2)
			_, err := bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: b.ID, Offset: 3, Children: cloneJobs(again)})
			assert.ErrorIs(t, err, spi.ErrBatchOffset, "a chunk at an offset already written (a retry that committed the first time)")
			assert.ErrorIs(t, err, spi.ErrInvalidState, "ErrBatchOffset wraps ErrInvalidState")
			f.assertAbsent(again, "a chunk refused for its offset")
			gap := f.children(b, 1)
			_, err = bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: b.ID, Offset: 6, Children: cloneJobs(gap)})
			assert.ErrorIs(t, err, spi.ErrBatchOffset, "a chunk past the persisted count")
			f.assertAbsent(gap, "a chunk refused for its offset")
			_, err = bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: b.ID, Create: b.Clone(), Children: cloneJobs(f.children(b, 1))})
			assert.ErrorIs(t, err, spi.ErrInvalidState, "creating a batch that exists")
			assertBatch(t, b, f.getBatch(bs, b.ID), 5, false, "", time.Time{}, uuid.Nil, "after the refused chunks")

			f.chunk(bs, spi.BatchChunk{BatchID: b.ID, Offset: 5, Seal: true})
			assertBatch(t, b, f.getBatch(bs, b.ID), 5, true, "", time.Time{}, uuid.Nil, "after an empty sealing chunk")
			late := f.children(b, 1)
			_, err = bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: b.ID, Offset: 5, Children: cloneJobs(late)})
			assert.ErrorIs(t, err, spi.ErrInvalidState, "a chunk after the seal")
			f.assertAbsent(late, "a chunk after the seal")

			unknown := f.nextID()
			orphans := f.children(&spi.Batch{ID: unknown}, 2)
			_, err = bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: unknown, Children: cloneJobs(orphans)})
			assert.ErrorIs(t, err, spi.ErrNotFound, "a chunk of an unknown batch")
			f.assertAbsent(orphans, "a chunk of an unknown batch")
			_, err = bs.GetBatch(f.ctx, unknown)
			assert.ErrorIs(t, err, spi.ErrNotFound, "GetBatch of an unknown batch")

			page, _ := f.list(spi.ListParams{WorkflowID: b.ID, Limit: 100})
			assert.Equal(t, ids(append(first, second...)), ids(page), "ListJobs by WorkflowID lists the batch's children")
		}},
		{"Count", func(t tb, f *fixture) {
			bs := f.batches()
			b := f.newBatch("", false)
			kids := f.children(b, 6)
			f.createBatch(bs, b, kids, true)
			other := f.newBatch("other", false)
			f.createBatch(bs, other, f.children(other, 2), true)
			counts, err := bs.CountBatch(f.ctx, b.ID)
			require.NoError(t, err)
			assert.Equal(t, map[spi.Status]int{spi.StatusPending: 6}, counts, "six PENDING children, none of the other batch")

			now := at(time.Minute)
			got := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 10, Now: now})
			byID := map[uuid.UUID]*spi.Job{}
			for _, j := range got {
				byID[j.ID] = j
			}
			require.Contains(t, byID, kids[0].ID)
			require.Equal(t, []bool{true, true}, f.complete(
				succeeded(byID[kids[0].ID], now, nil, ""), failed(byID[kids[1].ID], now, 1, "boom")))
			for _, j := range got {
				if j.ID != kids[0].ID && j.ID != kids[1].ID && j.ID != kids[2].ID {
					require.Equal(t, []bool{true}, f.release(now, ref(j)))
				}
			}
			require.NoError(t, f.s.CancelJob(f.ctx, kids[3].ID, now))
			counts, err = bs.CountBatch(f.ctx, b.ID)
			require.NoError(t, err)
			assert.Equal(t, map[spi.Status]int{spi.StatusSucceeded: 1, spi.StatusFailed: 1, spi.StatusRunning: 1,
				spi.StatusCancelled: 1, spi.StatusPending: 2}, counts, "the children by status (states with none left out)")
			_, err = bs.CountBatch(f.ctx, f.nextID())
			assert.ErrorIs(t, err, spi.ErrNotFound, "CountBatch of an unknown batch")
		}},
		{"FinishSucceeded", func(t tb, f *fixture) {
			bs := f.batches()
			b := f.newBatch("all good", true)
			kids := f.children(b, 4)
			f.createBatch(bs, b, kids[:2], false)
			assert.Empty(t, f.finishBatches(bs, at(time.Minute), 10), "an open batch with PENDING children")
			f.settle(at(2*time.Minute), nil)
			assert.Empty(t, f.finishBatches(bs, at(3*time.Minute), 10), "a batch that is not sealed does not end, though its children finished")
			f.chunk(bs, spi.BatchChunk{BatchID: b.ID, Offset: 2, Children: kids[2:], Seal: true})
			assert.Empty(t, f.finishBatches(bs, at(4*time.Minute), 10), "sealed, with children PENDING")
			f.settle(at(5*time.Minute), nil)
			now := at(6*time.Minute + 7*time.Microsecond)
			ended := f.finishBatches(bs, now, 10)
			require.Len(t, ended, 1, "the sealed batch whose children all succeeded ends")
			assert.Equal(t, b.ID, ended[0].ID)
			assert.Equal(t, b.Name, ended[0].Name)
			assert.Equal(t, spi.BatchSucceeded, ended[0].Outcome)
			want := spi.BatchCallbackJob(b.OnSuccess, now)
			if assert.NotNil(t, ended[0].Callback, "FinishBatches reports the OnSuccess callback it inserted") {
				assert.Equal(t, b.OnSuccess.ID, ended[0].Callback.ID)
			}
			assertJob(t, want, f.get(b.OnSuccess.ID), "the OnSuccess callback: PENDING, created and due at the end")
			f.assertAbsent([]*spi.Job{b.OnFailure}, "the OnFailure callback of a batch that succeeded")
			assertBatch(t, b, f.getBatch(bs, b.ID), 4, true, spi.BatchSucceeded, now, b.OnSuccess.ID, "after the end")
			assert.Empty(t, f.finishBatches(bs, now.Add(time.Minute), 10), "a batch ends once")
			_, err := bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: b.ID, Offset: 4, Children: cloneJobs(f.children(b, 1))})
			assert.ErrorIs(t, err, spi.ErrInvalidState, "a chunk of an ended batch")
		}},
		{"FinishFailed", func(t tb, f *fixture) {
			bs := f.batches()
			failing := f.newBatch("one fails", true)
			fk := f.children(failing, 3)
			f.createBatch(bs, failing, fk, true)
			cancelled := f.newBatch("one cancelled", false)
			ck := f.children(cancelled, 2)
			f.createBatch(bs, cancelled, ck, true)
			require.NoError(t, f.s.CancelJob(f.ctx, ck[0].ID, at(time.Minute)))
			f.settle(at(2*time.Minute), func(j *spi.Job) bool { return j.ID == fk[1].ID })
			now := at(3 * time.Minute)
			ended := f.finishBatches(bs, now, 10)
			require.Len(t, ended, 2)
			byID := map[uuid.UUID]spi.FinishedBatch{}
			for _, e := range ended {
				byID[e.ID] = e
			}
			assert.Equal(t, spi.BatchFailed, byID[failing.ID].Outcome, "a batch with a FAILED child")
			assert.Equal(t, spi.BatchFailed, byID[cancelled.ID].Outcome, "a batch with a CANCELLED child")
			assert.Nil(t, byID[cancelled.ID].Callback, "a batch without callbacks inserts none")
			assertJob(t, spi.BatchCallbackJob(failing.OnFailure, now), f.get(failing.OnFailure.ID), "the OnFailure callback")
			f.assertAbsent([]*spi.Job{failing.OnSuccess}, "the OnSuccess callback of a batch that failed")
			assertBatch(t, failing, f.getBatch(bs, failing.ID), 3, true, spi.BatchFailed, now, failing.OnFailure.ID, "the failed batch")
			assertBatch(t, cancelled, f.getBatch(bs, cancelled.ID), 2, true, spi.BatchFailed, now, uuid.Nil, "the batch with a cancelled child")
		}},
		{"EmptyAndLimit", func(t tb, f *fixture) {
			bs := f.batches()
			var bb []*spi.Batch
			for i := range 3 {
				b := f.newBatch(fmt.Sprintf("empty %d", i), i == 0)
				f.createBatch(bs, b, nil, true)
				bb = append(bb, b)
			}
			now := at(time.Hour)
			first := f.finishBatches(bs, now, 2)
			assert.Len(t, first, 2, "FinishBatches stops at its limit")
			rest := f.finishBatches(bs, now, 2)
			assert.Len(t, rest, 1, "and the next call ends the rest")
			seen := map[uuid.UUID]bool{}
			for _, e := range append(first, rest...) {
				assert.False(t, seen[e.ID], "batch %s ended twice", e.ID)
				seen[e.ID] = true
				assert.Equal(t, spi.BatchSucceeded, e.Outcome, "an empty sealed batch succeeds")
			}
			assert.Len(t, seen, 3)
			assertJob(t, spi.BatchCallbackJob(bb[0].OnSuccess, now), f.get(bb[0].OnSuccess.ID), "an empty batch's OnSuccess callback")
		}},
		{"Cancel", func(t tb, f *fixture) {
			bs := f.batches()
			b := f.newBatch("to cancel", true)
			kids := f.children(b, 3)
			f.createBatch(bs, b, kids, false)
			now := at(time.Minute)
			got := f.claim("node-a", 2, now, 0)
			require.Len(t, got, 2)
			require.Equal(t, []bool{true}, f.complete(succeeded(got[0], now, nil, "")))
			runningChild := got[1]
			cancelAt := at(2 * time.Minute)
			n, err := bs.CancelBatch(f.ctx, b.ID, cancelAt)
			require.NoError(t, err)
			assert.Equal(t, 2, n, "CancelBatch cancels the RUNNING and the PENDING child, not the SUCCEEDED one")
			for _, j := range kids {
				g := f.get(j.ID)
				if j.ID == got[0].ID {
					assert.Equal(t, spi.StatusSucceeded, g.Status)
					continue
				}
				assert.Equal(t, spi.StatusCancelled, g.Status, "child %s after CancelBatch", j.ID)
				assertInstant(t, cancelAt, g.FinishedAt, "a cancelled child's FinishedAt")
			}
			assert.Equal(t, []bool{false}, f.complete(succeeded(runningChild, cancelAt, nil, "")), "the owner of a cancelled RUNNING child is fenced out")
			assertBatch(t, b, f.getBatch(bs, b.ID), 3, true, spi.BatchCancelled, cancelAt, uuid.Nil, "a cancelled batch: sealed, CANCELLED, no callback")
			_, err = bs.AddBatchChunk(f.ctx, spi.BatchChunk{BatchID: b.ID, Offset: 3, Children: cloneJobs(f.children(b, 1))})
			assert.ErrorIs(t, err, spi.ErrInvalidState, "a chunk of a cancelled batch")
			assert.Empty(t, f.finishBatches(bs, at(time.Hour), 10), "a cancelled batch does not end again")
			f.assertAbsent([]*spi.Job{b.OnSuccess, b.OnFailure}, "a cancelled batch calls no callback")
			n, err = bs.CancelBatch(f.ctx, b.ID, at(3*time.Minute))
			require.NoError(t, err, "CancelBatch of a cancelled batch (a retry)")
			assert.Zero(t, n, "nothing is left to cancel")
			assertBatch(t, b, f.getBatch(bs, b.ID), 3, true, spi.BatchCancelled, cancelAt, uuid.Nil, "a second CancelBatch keeps the first's time")

			_, err = bs.CancelBatch(f.ctx, f.nextID(), cancelAt)
			assert.ErrorIs(t, err, spi.ErrNotFound, "CancelBatch of an unknown batch")
			done := f.newBatch("done", false)
			f.createBatch(bs, done, nil, true)
			require.Len(t, f.finishBatches(bs, at(time.Hour), 10), 1)
			_, err = bs.CancelBatch(f.ctx, done.ID, at(2*time.Hour))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "CancelBatch of a batch that ended SUCCEEDED")
			assertBatch(t, done, f.getBatch(bs, done.ID), 0, true, spi.BatchSucceeded, at(time.Hour), uuid.Nil, "a refused cancel changes nothing")
		}},
		{"ArchiveKeepsOpenBatches", func(t tb, f *fixture) {
			bs := f.batches()
			a := f.archiver()
			b := f.newBatch("archive", false)
			kids := f.children(b, 2)
			f.createBatch(bs, b, kids, false)
			f.settle(at(time.Minute), nil)
			assert.Zero(t, f.archive(a, at(time.Hour), 100), "the finished children of an open batch stay live")
			f.chunk(bs, spi.BatchChunk{BatchID: b.ID, Offset: 2, Seal: true})
			require.Len(t, f.finishBatches(bs, at(2*time.Minute), 10), 1)
			assert.Equal(t, 2, f.archive(a, at(time.Hour), 100), "once the batch ended, its children archive")
			counts, err := bs.CountBatch(f.ctx, b.ID)
			require.NoError(t, err)
			assert.Empty(t, counts, "archived children are not counted (Persisted minus the counts are archived)")
			assertBatch(t, b, f.getBatch(bs, b.ID), 2, true, spi.BatchSucceeded, at(2*time.Minute), uuid.Nil, "the batch after its children archived")
		}},
		{"FinishOnceConcurrently", func(t tb, f *fixture) {
			bs := f.batches()
			hs := f.handles()
			finishers := make([]spi.BatchStore, len(hs))
			for i, h := range hs {
				finishers[i] = handleAs[spi.BatchStore](f, h, "spi.BatchStore")
			}
			const n = 12
			var bb []*spi.Batch
			kids := map[uuid.UUID][]*spi.Job{}
			for i := range n {
				b := f.newBatch(fmt.Sprintf("race %d", i), true)
				kids[b.ID] = f.children(b, 2)
				f.createBatch(bs, b, kids[b.ID], true)
				bb = append(bb, b)
			}
			f.settle(at(time.Minute), func(j *spi.Job) bool { return j.Payload[len(j.Payload)-2] == '1' && j.ID[15]%2 == 0 })
			now := at(2 * time.Minute)
			var mu sync.Mutex
			ended := map[uuid.UUID]int{}
			var errs []error
			start := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for range 2 * n {
						out, err := finishers[w%len(finishers)].FinishBatches(f.ctx, now, 2)
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						}
						for _, e := range out {
							ended[e.ID]++
						}
						mu.Unlock()
						if err != nil || len(out) == 0 {
							return
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			require.Empty(t, errs, "FinishBatches racing on %d handles", len(hs))
			outcomes := map[spi.BatchOutcome]int{}
			for _, b := range bb {
				assert.Equal(t, 1, ended[b.ID], "batch %s ended %d times by six racing finishers", b.ID, ended[b.ID])
				g := f.getBatch(bs, b.ID)
				require.NotEmpty(t, g.Outcome, "batch %s did not end", b.ID)
				all := true
				for _, c := range kids[b.ID] {
					all = all && f.get(c.ID).Status == spi.StatusSucceeded
				}
				assert.Equal(t, spi.BatchOutcomeOf(all), g.Outcome, "batch %s's outcome", b.ID)
				outcomes[g.Outcome]++
				cb := b.Callback(g.Outcome)
				assert.Equal(t, cb.ID, g.CallbackID)
				f.get(cb.ID)
				f.assertAbsent([]*spi.Job{b.Callback(map[spi.BatchOutcome]spi.BatchOutcome{
					spi.BatchSucceeded: spi.BatchFailed, spi.BatchFailed: spi.BatchSucceeded}[g.Outcome])}, "the other callback")
			}
			require.NotZero(t, outcomes[spi.BatchSucceeded], "the case means some batches to succeed")
			require.NotZero(t, outcomes[spi.BatchFailed], "the case means some batches to fail")
			for _, task := range []string{"tck.batch.success", "tck.batch.failure"} {
				jobs := f.listAll("")
				k := 0
				for _, j := range jobs {
					if j.TaskName == task {
						k++
					}
				}
				want := 0
				for _, b := range bb {
					if cb := b.Callback(f.getBatch(bs, b.ID).Outcome); cb.TaskName == task {
						want++
					}
				}
				assert.Equal(t, want, k, "one %s callback per batch that ended so, and no other", task)
			}
		}},
		{"RejectsBad", func(t tb, f *fixture) {
			bs := f.batches()
			for _, tc := range []struct {
				name string
				make func() spi.BatchChunk
			}{
				{"a child of another batch", func() spi.BatchChunk {
					b := f.newBatch("", false)
					kids := f.children(b, 2)
					kids[1].WorkflowID = f.nextID()
					return spi.BatchChunk{BatchID: b.ID, Create: b, Children: kids}
				}},
				{"a child with an idempotency key", func() spi.BatchChunk {
					b := f.newBatch("", false)
					kids := f.children(b, 2)
					kids[1].IdempotencyKey = "tck-batch-key"
					return spi.BatchChunk{BatchID: b.ID, Create: b, Children: kids}
				}},
				{"a child with dependencies", func() spi.BatchChunk {
					b := f.newBatch("", false)
					kids := f.children(b, 2)
					kids[0].Dependents = 1
					kids[1].Dependencies = []spi.Dependency{{ParentID: kids[0].ID}}
					return spi.BatchChunk{BatchID: b.ID, Create: b, Children: kids}
				}},
				{"a create at offset 3", func() spi.BatchChunk {
					b := f.newBatch("", false)
					return spi.BatchChunk{BatchID: b.ID, Create: b, Offset: 3, Children: f.children(b, 1)}
				}},
				{"a 256-byte name", func() spi.BatchChunk {
					b := f.newBatch(strings.Repeat("n", spi.MaxBatchNameBytes+1), false)
					return spi.BatchChunk{BatchID: b.ID, Create: b, Children: f.children(b, 1)}
				}},
				{"a callback without an id", func() spi.BatchChunk {
					b := f.newBatch("", true)
					b.OnFailure.ID = uuid.Nil
					return spi.BatchChunk{BatchID: b.ID, Create: b, Children: f.children(b, 1)}
				}},
				{"a child with a bad priority", func() spi.BatchChunk {
					b := f.newBatch("", false)
					kids := f.children(b, 2)
					kids[1].Priority = 9
					return spi.BatchChunk{BatchID: b.ID, Create: b, Children: kids}
				}},
			} {
				c := tc.make()
				kids := cloneJobs(c.Children)
				_, err := bs.AddBatchChunk(f.ctx, c)
				assert.Error(t, err, "AddBatchChunk of %s", tc.name)
				f.assertAbsent(kids, "a refused chunk ("+tc.name+")")
				_, err = bs.GetBatch(f.ctx, c.BatchID)
				assert.True(t, errors.Is(err, spi.ErrNotFound), "a chunk refused (%s) creates no batch: %v", tc.name, err)
			}
		}},
	}
}
