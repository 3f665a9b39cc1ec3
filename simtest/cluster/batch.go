package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The batch workload. Unless Scenario.NoBatches (or the store keeps no
// batches), about one arrival in ten is a batch (spi.BatchStore) of 1 to 4
// children with an OnSuccess and an OnFailure callback; half are sealed at
// once, the others get a second chunk of 1 to 3 children at a later
// arrival (now and then tried first at a stale offset, which must be
// refused with nothing written) and are sealed then. The children are
// ordinary jobs of the model: claimed, run, retried, failed, cancelled and
// DLQ-retried like any other. The admin workload cancels open batches now
// and then; every node runs the batch finisher's pass
// (spi.BatchStore.FinishBatches, at most 2 batches a call) each simulated
// second while it is up. The model predicts every pass exactly: the
// sealed open batches none of whose children is unfinished, in id order,
// each SUCCEEDED when every child succeeded and FAILED otherwise, and the
// callback it inserts joins the model as a PENDING job.
//
// The invariant, batch-once: every batch ends exactly once, never while
// it is unsealed or a child has not finished, with the outcome its
// children's states call for and the matching callback inserted once (or
// CANCELLED by hand, with none); a refused chunk writes nothing; and the
// store's counts of a batch's children are the model's.

const invBatchOnce = "batch-once"

// finishBatch is the most batches one finisher call ends.
const finishBatch = 2

// sbatch is one batch of the model.
type sbatch struct {
	id       uuid.UUID
	label    string
	kids     []*sjob
	sealed   bool
	outcome  spi.BatchOutcome
	callback *sjob // the callback job its end inserted
	// onSuccess and onFailure are the callback jobs as written.
	onSuccess, onFailure *spi.Job
	ends                 int // the ends the store reported
}

// batchesOn reports whether the run submits batches.
func (w *world) batchesOn() bool {
	return !w.sc.NoBatches && spi.CapabilitiesOf(w.store).Batches != nil
}

// unsealed returns the batches still taking chunks.
func (w *world) unsealed() []*sbatch {
	var out []*sbatch
	for _, b := range w.batches {
		if !b.sealed && b.outcome == "" {
			out = append(out, b)
		}
	}
	return out
}

// batchChildren draws k children of batch id (no idempotency keys).
func (w *world) batchChildren(id uuid.UUID, k int) ([]*spi.Job, []jobSpec) {
	now := w.now()
	jobs := make([]*spi.Job, k)
	specs := make([]jobSpec, k)
	for i := range jobs {
		s := w.randomSpec()
		s.key = ""
		specs[i] = s
		jobs[i] = &spi.Job{
			ID: w.newID(), TaskName: s.task, Payload: []byte(fmt.Sprintf(`{"n":%d}`, len(w.jobs)+i+1)),
			Status: spi.StatusPending, Priority: s.prio, ScheduledAt: now.Add(s.delay), CreatedAt: now,
			MaxRetries: s.maxRetries, Backoff: s.backoff, BackoffParam: s.param,
			Tags: slices.Clone(s.tags), Resource: s.resource, ResourceLimit: s.limit, WorkflowID: id,
		}
	}
	return jobs, specs
}

// callbackJob draws a batch's callback job: an ordinary task, due at
// once.
func (w *world) callbackJob(name string) *spi.Job {
	s := w.randomSpec()
	now := w.now()
	return &spi.Job{ID: w.newID(), TaskName: s.task, Payload: []byte(fmt.Sprintf(`{"callback":%q}`, name)),
		Status: spi.StatusPending, Priority: s.prio, ScheduledAt: now, CreatedAt: now,
		MaxRetries: s.maxRetries, Backoff: s.backoff, BackoffParam: s.param, Tags: slices.Clone(s.tags)}
}

// submitBatch writes a new batch, or the second chunk of an unsealed one.
func (w *world) submitBatch() error {
	if open := w.unsealed(); len(open) > 0 && w.rng.IntN(2) == 0 {
		return w.addChunk(open[w.rng.IntN(len(open))], 1+w.rng.IntN(3))
	}
	b := &sbatch{id: w.newID(), label: fmt.Sprintf("b%d", len(w.batches)+1)}
	b.onSuccess, b.onFailure = w.callbackJob(b.label+" ok"), w.callbackJob(b.label+" failed")
	kids, specs := w.batchChildren(b.id, 1+w.rng.IntN(4))
	seal := w.rng.IntN(2) == 0
	now := w.now()
	_, err := spi.CapabilitiesOf(w.store).Batches.AddBatchChunk(w.ctx, spi.BatchChunk{BatchID: b.id, Seal: seal, Children: kids,
		Create: &spi.Batch{ID: b.id, Name: b.label, CreatedAt: now, OnSuccess: b.onSuccess.Clone(), OnFailure: b.onFailure.Clone()}})
	if err != nil {
		return w.storeErr("AddBatchChunk", err)
	}
	w.batches = append(w.batches, b)
	added := w.addKids(b, kids, specs)
	b.sealed = seal
	w.tracef(added, nil, "client batch %s [%s] sealed=%v", b.label, labels(added), seal)
	return nil
}

// addChunk writes the last chunk of unsealed batch b (k children, or
// none), sealing it; now and then it tries a stale offset first, which
// must be refused with nothing written.
func (w *world) addChunk(b *sbatch, k int) error {
	bs := spi.CapabilitiesOf(w.store).Batches
	kids, specs := w.batchChildren(b.id, k)
	if len(b.kids) > 0 && w.rng.IntN(4) == 0 {
		_, err := bs.AddBatchChunk(w.ctx, spi.BatchChunk{BatchID: b.id, Offset: int64(len(b.kids) - 1), Children: kids, Seal: true})
		w.tracef(nil, nil, "client chunk of %s at stale offset %d -> %v", b.label, len(b.kids)-1, err)
		w.check(invBatchOnce)
		if !errors.Is(err, spi.ErrBatchOffset) {
			w.fail(invBatchOnce, b.kids, nil, "a chunk of %s at offset %d, with %d persisted, returned %v; expected ErrBatchOffset", b.label, len(b.kids)-1, len(b.kids), err)
			return nil
		}
		for _, j := range kids {
			if _, err := w.store.GetJob(w.ctx, j.ID); !errors.Is(err, spi.ErrNotFound) {
				w.fail(invBatchOnce, b.kids, nil, "the refused chunk of %s wrote child %s (GetJob: %v)", b.label, j.ID, err)
				return nil
			}
		}
	}
	n, err := bs.AddBatchChunk(w.ctx, spi.BatchChunk{BatchID: b.id, Offset: int64(len(b.kids)), Children: kids, Seal: true})
	if err != nil {
		return w.storeErr("AddBatchChunk", err)
	}
	added := w.addKids(b, kids, specs)
	b.sealed = true
	w.tracef(added, nil, "client chunk of %s [%s] sealed -> %d", b.label, labels(added), n)
	w.check(invBatchOnce)
	if n != int64(len(b.kids)) {
		w.fail(invBatchOnce, b.kids, nil, "the chunk of %s returned count %d; the batch has %d children", b.label, n, len(b.kids))
	}
	return nil
}

// addKids puts the children written into the model.
func (w *world) addKids(b *sbatch, kids []*spi.Job, specs []jobSpec) []*sjob {
	var added []*sjob
	for i, s := range specs {
		j := &sjob{
			idx: len(w.jobs), id: kids[i].ID, task: s.task, poison: s.poison, prio: s.prio, due: kids[i].ScheduledAt,
			maxRetries: s.maxRetries, backoff: s.backoff, param: s.param, tags: s.tags, resource: s.resource, limit: s.limit,
			pendPos: -1, runPos: -1, batch: b,
		}
		j.label = fmt.Sprintf("j%d", j.idx+1)
		w.jobs = append(w.jobs, j)
		w.byID[j.id] = j
		w.nonTerminal++
		w.setStatus(j, spi.StatusPending)
		w.touch(j)
		b.kids = append(b.kids, j)
		added = append(added, j)
	}
	return added
}

// sealBatches seals every unsealed batch with an empty chunk: before the
// aging probe and at the heal phase, so that every batch can end.
func (w *world) sealBatches() error {
	for _, b := range w.unsealed() {
		if err := w.addChunk(b, 0); err != nil || w.failure != nil {
			return err
		}
	}
	return nil
}

// endable returns the batches a finisher pass ends, in its order.
func (w *world) endable() []*sbatch {
	var out []*sbatch
	for _, b := range w.batches {
		if b.sealed && b.outcome == "" && !slices.ContainsFunc(b.kids, func(j *sjob) bool { return !j.status.Terminal() }) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *sbatch) int { return strings.Compare(string(a.id[:]), string(b.id[:])) })
	return out
}

// finishPass is one pass of a node's batch finisher: the engine's own
// (nodecore.BatchFinish), through a store that checks each call against the
// model.
func (w *world) finishPass(n *node) error {
	if n.state != nodeUp || !n.claiming {
		return nil
	}
	p := nodecore.BatchFinish{Store: finishCheck{BatchStore: spi.CapabilitiesOf(w.store).Batches, w: w, n: n}, Limit: finishBatch}
	if err := nodecore.Drain(w.now(), func(now time.Time) (bool, error) { return p.Pass(w.ctx, now) }); err != nil && !errors.Is(err, errCaught) {
		return err
	}
	w.schedule(time.Second, w.nodeEvent(n, evBatchFinish))
	return nil
}

// finishCheck is the batch store as a node's finisher sees it: what each
// FinishBatches call ends is checked against the model, and applied to it.
type finishCheck struct {
	spi.BatchStore
	w *world
	n *node
}

func (c finishCheck) FinishBatches(ctx context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	want := c.w.endable()
	want = want[:min(len(want), limit)]
	got, err := c.BatchStore.FinishBatches(ctx, now, limit)
	if err != nil {
		return nil, c.w.storeErr("FinishBatches", err)
	}
	c.w.checkEnded(c.n, want, got, now)
	if c.w.failure != nil {
		return nil, errCaught
	}
	return got, nil
}

// checkEnded checks what one FinishBatches call ended against the model,
// and applies it.
func (w *world) checkEnded(n *node, want []*sbatch, got []spi.FinishedBatch, now time.Time) {
	var parts []string
	for _, g := range got {
		parts = append(parts, fmt.Sprintf("%s %s", w.batchLabel(g.ID), g.Outcome))
	}
	if len(got) > 0 || len(want) > 0 {
		w.tracef(nil, []*node{n}, "%s batch finisher -> [%s]", n.id, strings.Join(parts, ", "))
	}
	w.check(invBatchOnce)
	if len(got) != len(want) {
		w.fail(invBatchOnce, nil, []*node{n}, "FinishBatches ended [%s]; the model ends %s", strings.Join(parts, ", "), batchLabels(want))
		return
	}
	for i, g := range got {
		b := want[i]
		if g.ID != b.id {
			w.fail(invBatchOnce, b.kids, []*node{n}, "FinishBatches ended %s; the model ends %s next", w.batchLabel(g.ID), b.label)
			return
		}
		o := spi.BatchOutcomeOf(!slices.ContainsFunc(b.kids, func(j *sjob) bool { return j.status != spi.StatusSucceeded }))
		cb := b.onSuccess
		if o == spi.BatchFailed {
			cb = b.onFailure
		}
		switch {
		case g.Outcome != o:
			w.fail(invBatchOnce, b.kids, []*node{n}, "%s ended %s; its children's states call for %s", b.label, g.Outcome, o)
			return
		case g.Callback == nil || g.Callback.ID != cb.ID:
			w.fail(invBatchOnce, b.kids, []*node{n}, "%s ended %s with callback %v; expected %s", b.label, o, g.Callback, cb.ID)
			return
		}
		b.outcome, b.ends = o, b.ends+1
		j := &sjob{idx: len(w.jobs), id: cb.ID, task: cb.TaskName, prio: cb.Priority, due: now, maxRetries: cb.MaxRetries,
			backoff: cb.Backoff, param: cb.BackoffParam, tags: cb.Tags, pendPos: -1, runPos: -1}
		j.label = fmt.Sprintf("j%d", j.idx+1)
		w.jobs = append(w.jobs, j)
		w.byID[j.id] = j
		w.nonTerminal++
		w.setStatus(j, spi.StatusPending)
		w.touch(j)
		b.callback = j
		w.tracef([]*sjob{j}, []*node{n}, "%s's %s callback is %s", b.label, o, j.label)
	}
}

// adminCancelBatch cancels an open batch: it ends CANCELLED, and its
// unfinished children are cancelled.
func (w *world) adminCancelBatch(now time.Time) {
	var open []*sbatch
	for _, b := range w.batches {
		if b.outcome == "" {
			open = append(open, b)
		}
	}
	if len(open) == 0 {
		return
	}
	b := open[w.rng.IntN(len(open))]
	got, err := spi.CapabilitiesOf(w.store).Batches.CancelBatch(w.ctx, b.id, now)
	var want []*sjob
	for _, j := range b.kids {
		if !j.status.Terminal() {
			want = append(want, j)
		}
	}
	w.tracef(b.kids, nil, "client cancel batch %s (unfinished %s) -> %d, %v", b.label, labels(want), got, err)
	w.check(invBatchOnce)
	if err != nil || got != len(want) {
		w.fail(invBatchOnce, want, nil, "CancelBatch of %s cancelled %d children (err %v); %d had not finished", b.label, got, err, len(want))
		return
	}
	b.outcome, b.sealed, b.ends = spi.BatchCancelled, true, b.ends+1
	w.cancelledByHand(want, now)
}

// unendedBatches counts the batches that have not ended.
func (w *world) unendedBatches() int {
	n := 0
	for _, b := range w.batches {
		if b.outcome == "" {
			n++
		}
	}
	return n
}

// checkBatches is the final check of batch-once: every batch ended once,
// reads back as the model holds it, and its counts are the model's.
func (w *world) checkBatches() {
	bs := spi.CapabilitiesOf(w.store).Batches
	for _, b := range w.batches {
		w.check(invBatchOnce)
		if b.ends != 1 || b.outcome == "" {
			w.fail(invBatchOnce, b.kids, nil, "%s ended %d times (outcome %q)", b.label, b.ends, b.outcome)
			return
		}
		g, err := bs.GetBatch(w.ctx, b.id)
		if err != nil {
			w.fail(invBatchOnce, b.kids, nil, "GetBatch(%s): %v", b.label, err)
			return
		}
		cbID := uuid.Nil
		if b.callback != nil {
			cbID = b.callback.id
		}
		if g.Outcome != b.outcome || g.Persisted != int64(len(b.kids)) || !g.Sealed || g.CallbackID != cbID {
			w.fail(invBatchOnce, b.kids, nil, "%s reads back outcome %s, %d persisted, sealed %v, callback %s; the model has %s, %d, true, %s",
				b.label, g.Outcome, g.Persisted, g.Sealed, g.CallbackID, b.outcome, len(b.kids), cbID)
			return
		}
		counts, err := bs.CountBatch(w.ctx, b.id)
		if err != nil {
			w.fail(invBatchOnce, b.kids, nil, "CountBatch(%s): %v", b.label, err)
			return
		}
		want := map[spi.Status]int{}
		for _, j := range b.kids {
			want[j.status]++
		}
		if fmt.Sprint(counts) != fmt.Sprint(want) {
			w.fail(invBatchOnce, b.kids, nil, "CountBatch(%s) = %v; the model counts %v", b.label, counts, want)
			return
		}
	}
}

func (w *world) batchLabel(id uuid.UUID) string {
	for _, b := range w.batches {
		if b.id == id {
			return b.label
		}
	}
	return "unknown batch " + id.String()
}

func batchLabels(bs []*sbatch) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.label
	}
	return "[" + strings.Join(parts, " ") + "]"
}
