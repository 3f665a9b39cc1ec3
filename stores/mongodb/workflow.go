package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Workflows (spi.WorkflowStore) without multi-document transactions.
//
// A child document holds its dependencies (deps, in insert order) and the
// states its finished parents ended in (dps, keyed by the parent's id); a
// parent holds the ids of its children (kids). Every step below is one
// single-document atomic write whose filter holds its precondition, so
// each can be repeated, and RepairWorkflows finishes what a crash cut
// short:
//
//   - Insert: the jobs of a workflow are written staged (stg), every one
//     BLOCKED, with one ordered InsertMany; then one insert into the
//     workflows collection commits them (a document keyed by the workflow
//     id); then the roots become PENDING (WAITING, those that wait for a
//     signal) and the staging marks go. A
//     submitter that dies before its commit leaves staged jobs that no
//     claim takes and that RepairWorkflows deletes once they are older than
//     stagedTimeout (it first writes the same key as an abort mark, so a
//     commit that comes later fails instead of racing it); one that dies
//     after its commit leaves them for RepairWorkflows to activate.
//   - Release: the write that finishes a parent (a completion, a
//     crash-budget failure, a cancel) is followed, for each child, by one
//     write recording the parent's state on the child if it is not there
//     yet, and, when that was the child's last parent, one write moving it
//     BLOCKED → PENDING that requires every parent's state to be recorded.
//     A crash between the parent's write and its children's leaves children
//     BLOCKED behind finished parents: RepairWorkflows finds them (a scan of
//     the BLOCKED jobs) and releases them, recording the parents' states.
//   - DLQ retry: the dependents that the failure cancelled or skipped are
//     made to wait again first, deepest first, and the retried job becomes
//     PENDING last, so a crash in between leaves dependents waiting behind a
//     job that is still FAILED, which RepairWorkflows releases again (the
//     engine then cancels them as before); RepairWorkflows leaves a job
//     revived less than reviveGuard ago alone, so it does not race a retry
//     in flight.
//
// So on MongoDB a release that a crash cut short waits for the repair
// service (the engine's WorkflowRepairInterval, a minute by default)
// instead of being impossible; nothing is lost and nothing runs early.

var _ spi.WorkflowStore = (*Store)(nil)

const (
	// stagedTimeout is how long the staged jobs of an insert that never
	// committed are kept before RepairWorkflows deletes them.
	stagedTimeout = 10 * time.Minute
	// reviveGuard is how long RepairWorkflows leaves a job alone after a
	// DLQ retry made it wait again.
	reviveGuard = 30 * time.Second
	// repairPage is how many BLOCKED jobs RepairWorkflows reads at once.
	repairPage = 500
)

// releaseProjection is what deciding a release reads of a child.
var releaseProjection = bson.M{fStatus: 1, fScheduled: 1, fDeps: 1, fDepStates: 1, fRevived: 1}

// flowDoc is the part of a job document that workflows read.
type flowDoc struct {
	ID        bson.Binary       `bson:"_id"`
	Status    string            `bson:"status"`
	Scheduled int64             `bson:"scheduled_time"`
	ClaimSeq  int64             `bson:"claim_seq"`
	Resource  string            `bson:"resource_name"`
	LastError string            `bson:"last_error"`
	Deps      []depDoc          `bson:"deps"`
	DepStates map[string]string `bson:"dps"`
	Kids      []bson.Binary     `bson:"kids"`
	Revived   *int64            `bson:"revived"`
	Run       runDoc            `bson:",inline"`
}

// parents returns the ids of d's parents, in insert order.
func (d *flowDoc) parents() ([]uuid.UUID, error) {
	out := make([]uuid.UUID, len(d.Deps))
	for i, dep := range d.Deps {
		p, err := binaryID(dep.Parent)
		if err != nil {
			return nil, fmt.Errorf("a dependency of job %x: %w", d.ID.Data, err)
		}
		out[i] = p
	}
	return out, nil
}

// isFlowJob reports whether j is written by the workflow path.
func isFlowJob(j *spi.Job) bool {
	return j.WorkflowID != uuid.Nil || len(j.Dependencies) > 0 || j.Dependents > 0
}

// insertFlows writes the workflow jobs jobs[idx...] (see the comment at the
// top of this file): staged, committed per workflow, then activated.
func (s *Store) insertFlows(ctx context.Context, jobs []*spi.Job, idx []int) error {
	kids := map[uuid.UUID][]bson.Binary{}
	var flows []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, i := range idx {
		j := jobs[i]
		if j.WorkflowID == uuid.Nil {
			return fmt.Errorf("job %s has dependents but no workflow id; the MongoDB store stages a workflow by its id", j.ID)
		}
		if !seen[j.WorkflowID] {
			seen[j.WorkflowID] = true
			flows = append(flows, j.WorkflowID)
		}
		for _, d := range j.Dependencies {
			kids[d.ParentID] = append(kids[d.ParentID], idValue(j.ID))
		}
	}
	docs := make([]any, len(idx))
	for n, i := range idx {
		d := encodeJob(jobs[i])
		d.Status = string(spi.StatusBlocked)
		d.Kids = kids[jobs[i].ID]
		at := timeUS(jobs[i].CreatedAt)
		d.Staged = &at
		docs[n] = d
	}
	// Ordered, so that a failure leaves a prefix: parents before children.
	if _, err := s.jobs.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		for _, wf := range flows {
			s.discardStaged(ctx, wf)
		}
		return fmt.Errorf("write the workflow jobs: %w", err)
	}
	for n, wf := range flows {
		if _, err := s.flows.InsertOne(ctx, bson.M{"_id": idValue(wf), "at": timeUS(jobs[idx[0]].CreatedAt)}); err != nil {
			for _, later := range flows[n:] {
				s.discardStaged(ctx, later)
			}
			if mongo.IsDuplicateKeyError(err) {
				return fmt.Errorf("commit workflow %s: its id is taken (written before, or its insert was aborted by RepairWorkflows)", wf)
			}
			return fmt.Errorf("commit workflow %s: %w", wf, err)
		}
		// Committed: from here on the workflow exists, and an activation
		// cut short is RepairWorkflows' to finish.
		_, _ = s.activate(ctx, wf)
	}
	return nil
}

// discardStaged deletes the staged jobs of an insert that failed, as far as
// it can (RepairWorkflows deletes what is left).
func (s *Store) discardStaged(ctx context.Context, wf uuid.UUID) {
	_, _ = s.jobs.DeleteMany(context.WithoutCancel(ctx), bson.M{fWorkflow: idValue(wf), fStaged: bson.M{"$exists": true}})
}

// activate makes the staged roots of a committed workflow PENDING (WAITING
// for one that waits for a signal) and drops the staging marks, then the
// commit document; it returns how many roots it activated.
func (s *Store) activate(ctx context.Context, wf uuid.UUID) (int, error) {
	w := idValue(wf)
	// A root that waits for a signal becomes WAITING (see signal.go).
	rw, err := s.jobs.UpdateMany(ctx,
		bson.M{fWorkflow: w, fStaged: bson.M{"$exists": true}, fStatus: string(spi.StatusBlocked), fDeps: bson.M{"$exists": false},
			fSigName: bson.M{"$exists": true}, fSigOutcome: bson.M{"$exists": false}},
		bson.M{"$set": bson.M{fStatus: string(spi.StatusWaiting)}, "$unset": bson.M{fStaged: ""}})
	if err != nil {
		return 0, fmt.Errorf("activate workflow %s: %w", wf, err)
	}
	r, err := s.jobs.UpdateMany(ctx,
		bson.M{fWorkflow: w, fStaged: bson.M{"$exists": true}, fStatus: string(spi.StatusBlocked), fDeps: bson.M{"$exists": false},
			fSig: bson.M{"$exists": false}},
		bson.M{"$set": bson.M{fStatus: string(spi.StatusPending)}, "$unset": bson.M{fStaged: ""}})
	if err != nil {
		return int(rw.ModifiedCount), fmt.Errorf("activate workflow %s: %w", wf, err)
	}
	r.ModifiedCount += rw.ModifiedCount
	if _, err := s.jobs.UpdateMany(ctx, bson.M{fWorkflow: w, fStaged: bson.M{"$exists": true}},
		bson.M{"$unset": bson.M{fStaged: ""}}); err != nil {
		return int(r.ModifiedCount), fmt.Errorf("activate workflow %s: %w", wf, err)
	}
	if _, err := s.flows.DeleteOne(ctx, bson.M{"_id": w, "aborted": bson.M{"$exists": false}}); err != nil {
		return int(r.ModifiedCount), fmt.Errorf("activate workflow %s: %w", wf, err)
	}
	return int(r.ModifiedCount), nil
}

// releaseKids records on each child in kids that parent finished in st,
// and releases (BLOCKED → PENDING, due at the later of its due time and
// now) each child whose parents have now all finished. It returns how many
// it released. Each step is repeatable: a state already recorded is kept.
func (s *Store) releaseKids(ctx context.Context, parent uuid.UUID, st spi.Status, kids []bson.Binary, now time.Time) (int, error) {
	n := 0
	path := depPath(parent)
	for _, k := range kids {
		raw, err := s.findOneAndUpdate(ctx, bson.M{fID: k, path: bson.M{"$exists": false}},
			bson.M{"$set": bson.M{path: string(st)}}, nil, true, releaseProjection)
		if errors.Is(err, mongo.ErrNoDocuments) {
			// Recorded already (by a repeat, a peer or the repair); its
			// release may still be owed.
			raw, err = s.jobs.FindOne(ctx, bson.M{fID: k}, options.FindOne().SetProjection(releaseProjection)).Raw()
			if errors.Is(err, mongo.ErrNoDocuments) {
				continue // archived or deleted: nothing waits
			}
		}
		if err != nil {
			return n, fmt.Errorf("record the end of job %s on a dependent: %w", parent, err)
		}
		var d flowDoc
		if err := bson.Unmarshal(raw, &d); err != nil {
			return n, fmt.Errorf("a dependent of job %s: %w", parent, err)
		}
		ok, err := s.releaseIfDone(ctx, &d, nil, now)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// releaseIfDone releases the BLOCKED job d when each of its parents has a
// recorded state, or one in states (recorded in the same write). The write
// requires what it read: BLOCKED, the recorded states present and the new
// ones absent.
func (s *Store) releaseIfDone(ctx context.Context, d *flowDoc, states map[uuid.UUID]spi.Status, now time.Time) (bool, error) {
	if spi.Status(d.Status) != spi.StatusBlocked {
		return false, nil
	}
	parents, err := d.parents()
	if err != nil {
		return false, err
	}
	filter := bson.M{fID: d.ID, fStatus: string(spi.StatusBlocked)}
	set := bson.M{}
	for _, p := range parents {
		key := depKey(p)
		if _, ok := d.DepStates[key]; ok {
			filter[depPath(p)] = bson.M{"$exists": true}
			continue
		}
		st, ok := states[p]
		if !ok {
			return false, nil // a parent has not finished
		}
		filter[depPath(p)] = bson.M{"$exists": false}
		set[depPath(p)] = string(st)
	}
	r, err := s.jobs.UpdateOne(ctx, filter, updateOf(spi.Unblocked(usTime(d.Scheduled), now), set, nil))
	if err != nil {
		return false, fmt.Errorf("release job %x: %w", d.ID.Data, err)
	}
	return r.MatchedCount == 1, nil
}

// kidsOf decodes the dependents of a job document, if it has any.
func kidsOf(raw bson.Raw) []bson.Binary {
	var d struct {
		Kids []bson.Binary `bson:"kids"`
	}
	if bson.Unmarshal(raw, &d) != nil {
		return nil
	}
	return d.Kids
}

// revive makes the dependents that the failure of job id cancelled or
// skipped (and theirs, and the ones not run yet) wait for it again: the
// deepest first, each with one write that requires the state it read. The
// caller then makes the job itself PENDING.
func (s *Store) revive(ctx context.Context, id uuid.UUID, kids []bson.Binary, now time.Time) error {
	type step struct {
		doc      flowDoc
		parents  []uuid.UUID // whose recorded state to forget
		expanded bool
	}
	byID := map[string]*step{}
	var order []*step
	type edge struct {
		parent uuid.UUID
		kids   []bson.Binary
	}
	frontier := []edge{{id, kids}}
	for len(frontier) > 0 {
		e := frontier[0]
		frontier = frontier[1:]
		if len(e.kids) == 0 {
			continue
		}
		cur, err := s.jobs.Find(ctx, bson.M{fID: bson.M{"$in": e.kids}}, options.Find().SetProjection(
			bson.M{fStatus: 1, fLastError: 1, fKids: 1, fDepStates: 1}))
		if err != nil {
			return fmt.Errorf("read the dependents of job %s: %w", e.parent, err)
		}
		var docs []flowDoc
		if err := cur.All(ctx, &docs); err != nil {
			return fmt.Errorf("read the dependents of job %s: %w", e.parent, err)
		}
		for _, c := range docs {
			st := spi.Status(c.Status)
			ended := (st == spi.StatusCancelled || st == spi.StatusSkipped) && spi.CancelledByDependency(c.LastError)
			if st != spi.StatusBlocked && st != spi.StatusPending && !ended {
				continue
			}
			key := string(c.ID.Data)
			sp := byID[key]
			if sp == nil {
				sp = &step{doc: c}
				byID[key] = sp
				order = append(order, sp)
			}
			if _, ok := c.DepStates[depKey(e.parent)]; ok {
				sp.parents = append(sp.parents, e.parent)
			}
			if ended && !sp.expanded {
				sp.expanded = true
				cid, err := binaryID(c.ID)
				if err != nil {
					return err
				}
				frontier = append(frontier, edge{cid, c.Kids})
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		sp := order[i]
		unset := bson.M{}
		for _, p := range sp.parents {
			unset[depPath(p)] = ""
		}
		filter := bson.M{fID: sp.doc.ID, fStatus: sp.doc.Status}
		if _, err := s.jobs.UpdateOne(ctx, filter, updateOf(spi.Revived(), bson.M{fRevived: timeUS(now)}, unset)); err != nil {
			return fmt.Errorf("revive a dependent of job %s: %w", id, err)
		}
	}
	return nil
}

// Dependencies implements spi.WorkflowStore: the job's dependencies, from
// the live job or its archived copy.
func (s *Store) Dependencies(ctx context.Context, id uuid.UUID) ([]spi.Dependency, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	var d flowDoc
	proj := options.FindOne().SetProjection(bson.M{fDeps: 1, fDepStates: 1})
	err = s.jobs.FindOne(ctx, bson.M{fID: idValue(id)}, proj).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		err = s.archive.FindOne(ctx, bson.M{fID: idValue(id)}, proj).Decode(&d)
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err != nil {
		return nil, fail("dependencies", err)
	}
	parents, err := d.parents()
	if err != nil {
		return nil, fail("dependencies", corrupt(id.String(), "%v", err))
	}
	out := make([]spi.Dependency, len(d.Deps))
	for i, dep := range d.Deps {
		out[i] = spi.Dependency{ParentID: parents[i], Allow: spi.Allow(dep.Allow), Condition: dep.Condition,
			ConditionArgs: bytesOf(dep.ConditionArgs), ParentStatus: spi.Status(d.DepStates[depKey(parents[i])])}
	}
	return out, nil
}

// WorkflowJobs implements spi.WorkflowStore.
func (s *Store) WorkflowJobs(ctx context.Context, id, after uuid.UUID, limit int) ([]*spi.Job, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	return listPage(ctx, s.jobs, "workflow jobs", spi.ListParams{WorkflowID: id, After: after, Limit: limit})
}

// CancelWorkflow implements spi.WorkflowStore: one write per unfinished
// job, each requiring the state and claim sequence it read (a RUNNING
// job's claim sequence advances and its permit is freed; a WAITING job's
// wait is resolved CANCELLED), then the
// cancelled jobs' states are recorded on their dependents.
func (s *Store) CancelWorkflow(ctx context.Context, id uuid.UUID, now time.Time) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	n, err := s.cancelFlow(ctx, id, now)
	if err != nil {
		return n, fail("cancel workflow", err)
	}
	return n, nil
}

// cancelFlow is CancelWorkflow inside an operation already entered (also
// CancelBatch's, whose children are the jobs of its id).
func (s *Store) cancelFlow(ctx context.Context, id uuid.UUID, now time.Time) (int, error) {
	cur, err := s.jobs.Find(ctx, bson.M{fWorkflow: idValue(id), fStaged: bson.M{"$exists": false},
		fStatus: bson.M{"$in": bson.A{string(spi.StatusBlocked), string(spi.StatusPending), string(spi.StatusRunning), string(spi.StatusWaiting)}}},
		options.Find().SetProjection(bson.M{fStatus: 1, fClaimSeq: 1, fResource: 1, fKids: 1, fOwner: 1, fClaimed: 1}))
	if err != nil {
		return 0, err
	}
	var docs []flowDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, err
	}
	cancelled := make([]bool, len(docs))
	err = s.fanOut(ctx, max(len(docs), 1), func(ctx context.Context, i int) error {
		if len(docs) == 0 {
			return nil
		}
		d := docs[i]
		f := bson.M{fID: d.ID, fStatus: d.Status, fClaimSeq: d.ClaimSeq}
		update := cancelUpdate(now)
		resource, key := "", ""
		switch spi.Status(d.Status) {
		case spi.StatusWaiting:
			// The wait is resolved CANCELLED in the same write (signal.go).
			f[fSigOutcome] = bson.M{"$exists": false}
			update = cancelWaitUpdate(now)
		case spi.StatusRunning:
			update = updateOf(spi.Aborted(now), nil, nil)
			if jid, err := binaryID(d.ID); err == nil {
				resource, key = d.Resource, permitKey(jid, d.ClaimSeq)
			}
		}
		ok, err := s.fencedWrite(ctx, f, update, resource, key)
		cancelled[i] = ok
		if jid, idErr := binaryID(d.ID); err == nil && ok && idErr == nil && spi.Status(d.Status) == spi.StatusRunning {
			err = s.recordRun(context.WithoutCancel(ctx), jid, d.ClaimSeq, d.Run, spi.AttemptCancelled, now)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for i, d := range docs {
		if !cancelled[i] {
			continue
		}
		n++
		jid, err := binaryID(d.ID)
		if err != nil {
			continue
		}
		if _, err := s.releaseKids(ctx, jid, spi.StatusCancelled, d.Kids, now); err != nil {
			return n, err
		}
	}
	return n, nil
}

// RepairWorkflows implements spi.WorkflowStore: it activates the committed
// inserts whose activation was cut short and deletes the staged jobs of
// inserts that never committed (older than stagedTimeout), then scans the
// BLOCKED jobs in id order and releases each whose parents have all
// finished (a parent that is in neither the jobs nor the archive counts as
// CANCELLED), recording their states, in one write per job. A job that a
// DLQ retry revived less than reviveGuard ago is left for the next pass.
// Its cost is a read of every BLOCKED job, paged.
func (s *Store) RepairWorkflows(ctx context.Context, now time.Time, limit int) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	n, err := s.repairStaged(ctx, now)
	if err != nil {
		return n, fail("repair workflows", err)
	}
	after := idValue(uuid.Nil)
	for n < limit {
		cur, err := s.jobs.Find(ctx, bson.M{fStatus: string(spi.StatusBlocked), fID: bson.M{"$gt": after}, fStaged: bson.M{"$exists": false}},
			options.Find().SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(repairPage).SetProjection(releaseProjection))
		if err != nil {
			return n, fail("repair workflows", err)
		}
		var docs []flowDoc
		if err := cur.All(ctx, &docs); err != nil {
			return n, fail("repair workflows", err)
		}
		if len(docs) == 0 {
			break
		}
		after = docs[len(docs)-1].ID
		guard := timeUS(now.Add(-reviveGuard))
		var need []uuid.UUID
		ready := docs[:0:0]
		for i := range docs {
			if r := docs[i].Revived; r != nil && *r > guard {
				continue
			}
			ready = append(ready, docs[i])
		}
		for i := range ready {
			parents, err := ready[i].parents()
			if err != nil {
				return n, fail("repair workflows", err)
			}
			for _, p := range parents {
				if _, ok := ready[i].DepStates[depKey(p)]; !ok {
					need = append(need, p)
				}
			}
		}
		states, err := s.parentStates(ctx, need)
		if err != nil {
			return n, fail("repair workflows", err)
		}
		for i := range ready {
			if n >= limit {
				break
			}
			ok, err := s.releaseIfDone(ctx, &ready[i], states, now)
			if err != nil {
				return n, fail("repair workflows", err)
			}
			if ok {
				n++
			}
		}
		if len(docs) < repairPage {
			break
		}
	}
	return n, nil
}

// parentStates returns the terminal states of the jobs ids that have
// finished: live or archived, and CANCELLED for one that is in neither.
func (s *Store) parentStates(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]spi.Status, error) {
	out := make(map[uuid.UUID]spi.Status, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	missing := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		missing[id] = true
	}
	for _, coll := range []*mongo.Collection{s.jobs, s.archive} {
		var keys []uuid.UUID
		for id := range missing {
			keys = append(keys, id)
		}
		if len(keys) == 0 {
			break
		}
		cur, err := coll.Find(ctx, bson.M{fID: bson.M{"$in": idValues(keys)}}, options.Find().SetProjection(bson.M{fStatus: 1}))
		if err != nil {
			return nil, fmt.Errorf("read the parents of blocked jobs: %w", err)
		}
		var docs []flowDoc
		if err := cur.All(ctx, &docs); err != nil {
			return nil, fmt.Errorf("read the parents of blocked jobs: %w", err)
		}
		for _, d := range docs {
			id, err := binaryID(d.ID)
			if err != nil {
				continue
			}
			delete(missing, id)
			if st := spi.Status(d.Status); st.Terminal() {
				out[id] = st
			}
		}
	}
	for id := range missing {
		out[id] = spi.StatusCancelled
	}
	return out, nil
}

// repairStaged finishes or undoes the workflow inserts left staged: a
// committed one is activated, one with an abort mark or older than
// stagedTimeout without a commit is deleted (after writing the abort mark,
// so that a commit that comes later fails). It returns how many roots it
// activated.
func (s *Store) repairStaged(ctx context.Context, now time.Time) (int, error) {
	// Not the staged children of batches (fChunk): a batch commits and
	// activates its chunks itself (batch.go).
	cur, err := s.jobs.Find(ctx, bson.M{fStaged: bson.M{"$exists": true}, fChunk: bson.M{"$exists": false}},
		options.Find().SetProjection(bson.M{fWorkflow: 1, fStaged: 1}).SetLimit(10*repairPage))
	if err != nil {
		return 0, fmt.Errorf("read staged jobs: %w", err)
	}
	var docs []struct {
		Workflow bson.Binary `bson:"workflow_id"`
		Staged   int64       `bson:"stg"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fmt.Errorf("read staged jobs: %w", err)
	}
	newest := map[uuid.UUID]int64{}
	var flows []uuid.UUID
	for _, d := range docs {
		wf, err := binaryID(d.Workflow)
		if err != nil {
			continue
		}
		if at, ok := newest[wf]; !ok || d.Staged > at {
			if !ok {
				flows = append(flows, wf)
			}
			newest[wf] = d.Staged
		}
	}
	n := 0
	for _, wf := range flows {
		var mark struct {
			Aborted bool `bson:"aborted"`
		}
		err := s.flows.FindOne(ctx, bson.M{"_id": idValue(wf)}).Decode(&mark)
		switch {
		case err == nil && !mark.Aborted:
			k, err := s.activate(ctx, wf)
			n += k
			if err != nil {
				return n, err
			}
			continue
		case errors.Is(err, mongo.ErrNoDocuments):
			if newest[wf] > timeUS(now.Add(-stagedTimeout)) {
				continue // an insert may still be committing it
			}
			_, err := s.flows.InsertOne(ctx, bson.M{"_id": idValue(wf), "aborted": true, "at": timeUS(now)})
			if mongo.IsDuplicateKeyError(err) {
				continue // committed (or aborted) meanwhile: the next pass sees which
			}
			if err != nil {
				return n, fmt.Errorf("abort the insert of workflow %s: %w", wf, err)
			}
		case err != nil:
			return n, fmt.Errorf("read the commit of workflow %s: %w", wf, err)
		}
		if _, err := s.jobs.DeleteMany(ctx, bson.M{fWorkflow: idValue(wf), fStaged: bson.M{"$exists": true}}); err != nil {
			return n, fmt.Errorf("delete the staged jobs of workflow %s: %w", wf, err)
		}
	}
	return n, nil
}
